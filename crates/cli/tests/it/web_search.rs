//! The web UI's search box in a real headless Chromium against `seri
//! serve`: hits with the matched words marked (as nodes, never as HTML), a
//! hit opening its session scrolled to the event, the keyboard, a query
//! the syntax refuses, and the phone's drawer; axe-core checks every state
//! kept and the page logs no error.

use serde_json::{Value, json};

use crate::browser::{self, Browser, Theme, Window};
use crate::support::{Env, text};
use crate::web::{Served, TOKEN};

/// Enter, Escape and ↓, as WebDriver sends them.
const ENTER: &str = "\u{e007}";
const ESCAPE: &str = "\u{e00c}";
const DOWN: &str = "\u{e015}";

/// A session whose second event holds `exponential` (with markup in its
/// text), then enough exchanges that it is far above the newest; and
/// another session that says the word too. The long session's id.
fn profile(served: &Served) -> String {
    let long = served.new_session();
    served.say(&long, "What is the retry policy?");
    for n in 0..14 {
        served.say(&long, &format!("Go on, part {n}"));
    }
    let other = served.new_session();
    served.say(&other, "Is exponential growth a worry?");
    long
}

fn turns() -> Value {
    let mut turns = vec![text("We cap the exponential backoff <b>hard</b> at thirty seconds.")];
    for n in 0..14 {
        let lines: Vec<String> =
            (0..8).map(|l| format!("Part {n}, line {l}: more about jitter and timeouts.")).collect();
        turns.push(text(&lines.join("\n\n")));
    }
    turns.push(text("Not much."));
    Value::Array(turns)
}

/// Records console errors and refused content (CSP) from now on.
fn watch_errors(b: &Browser) {
    b.js(
        "window.__errors = [];\
         const original = console.error;\
         console.error = (...a) => { window.__errors.push(a.map(String).join(' ')); original(...a); };\
         document.addEventListener('securitypolicyviolation', (e) => window.__errors.push('CSP: ' + e.violatedDirective));\
         window.addEventListener('error', (e) => window.__errors.push(String(e.message)));",
        vec![],
    );
}

#[track_caller]
fn assert_no_errors(b: &Browser) {
    assert_eq!(b.js("return window.__errors", vec![]), json!([]), "console errors");
    assert_eq!(b.js("return document.body.dataset.fault === undefined", vec![]), true, "no fault in the page");
}

/// The hit of session `id` in the list, waited for.
fn hit_of(id: &str) -> String {
    format!("#search-hits .search-hit[data-session='{id}'] > a")
}

/// The event marked as the hit: its seq, whether it is on screen and
/// focused, the address, and the first event drawn.
fn shows_event(b: &Browser) -> Value {
    b.wait_for("the marked event", "document.querySelector('.event.hit')");
    b.js(
        "const hit = document.querySelector('.event.hit');\
         const r = hit.getBoundingClientRect();\
         return { seq: Number(hit.dataset.seq), onScreen: r.bottom > 0 && r.top < window.innerHeight,\
                  focused: document.activeElement === hit, hash: location.hash,\
                  first: Number(document.querySelector('.transcript [data-seq]').dataset.seq) };",
        vec![],
    )
}

#[test]
fn a_search_box_lists_marked_hits_and_a_hit_opens_its_session_at_the_event() {
    if !browser::available() {
        return;
    }
    let env = Env::new();
    let served = Served::start(&env, turns(), &[]);
    let long = profile(&served);

    let b = Browser::start();
    // A window of 6 events: the hit is far before the newest ones.
    b.sign_in(&format!("{}/?window=6", served.url), TOKEN);
    watch_errors(&b);
    b.type_into("#search-input", "exponential");
    b.press(ENTER);
    b.wait_for("two hits", "document.querySelectorAll('#search-hits .search-hit').length === 2");
    assert_eq!(b.text("#search-status"), "2 hits for “exponential”");
    let snippet = b.text(&format!("#search-hits .search-hit[data-session='{long}'] .hit-snippet"));
    assert_eq!(snippet, "We cap the exponential backoff <b>hard</b> at thirty seconds.");
    let marks = b.js(
        &format!(
            "return [...document.querySelectorAll(\"#search-hits .search-hit[data-session='{long}'] .hit-snippet > *\")]\
               .map((m) => m.tagName + ':' + m.textContent)"
        ),
        vec![],
    );
    assert_eq!(marks, json!(["MARK:exponential"]), "the word is marked, the markup is text");
    b.screenshot("search-hits");
    // The pure parts: marks as parts (an unclosed one runs to the end), and the address of an event.
    let parts = b.js_async(
        "const done = arguments[arguments.length - 1];\
         import('/ui/search.js').then((s) => done([s.snippetParts('a «b» «c»«d» e «f'), s.seqOfHash('#seq-12'),\
           s.seqOfHash('#seq-0'), s.hitHref({ sessionId: 'x y', seq: 3 })]), (e) => done('error: ' + e))",
        vec![],
    );
    assert_eq!(
        parts,
        json!([
            [
                { "text": "a ", "marked": false },
                { "text": "b", "marked": true },
                { "text": " ", "marked": false },
                { "text": "cd", "marked": true },
                { "text": " e ", "marked": false },
                { "text": "f", "marked": true }
            ],
            12,
            null,
            "/s/x%20y#seq-3"
        ])
    );

    // The keyboard: ↓ from the box to the hits, ↓ among them, Enter opens.
    b.js("document.getElementById('search-input').focus()", vec![]);
    b.press(DOWN);
    let first = b.js("return document.activeElement.closest('.search-hit').dataset.session", vec![]);
    let first = first.as_str().unwrap().to_owned();
    if first != long {
        b.press(DOWN);
    }
    assert_eq!(b.js("return document.activeElement.closest('.search-hit').dataset.session", vec![]), long.as_str());
    b.press(ENTER);
    b.wait_for("the long session", &format!("location.pathname.endsWith('{long}')"));
    let shown = shows_event(&b);
    assert_eq!(shown, json!({ "seq": 2, "onScreen": true, "focused": true, "hash": "#seq-2", "first": 1 }));
    b.wait_for(
        "the newest answer too",
        "[...document.querySelectorAll('.msg.assistant')].some(m => m.innerText.includes('Part 13, line 7'))",
    );
    b.screenshot("search-opened");

    // A reload tells the same story: the address names the event.
    b.goto(&format!("{}/s/{long}#seq-2", served.url));
    watch_errors(&b);
    assert_eq!(shows_event(&b)["seq"], 2);

    // A query the syntax refuses is said in words; Esc clears the box.
    b.type_into("#search-input", "\"retry");
    b.press(ENTER);
    b.wait_for("the refusal", "document.getElementById('search-status').innerText.includes('never closed')");
    assert_eq!(b.js("return document.getElementById('search-hits').hidden", vec![]), true);
    b.press(ESCAPE);
    b.wait_for("a cleared box", "document.getElementById('search-input').value === '' && document.getElementById('search-status').innerText === ''");
    b.type_into("#search-input", "absent");
    b.press(ENTER);
    b.wait_for("no hits", "document.getElementById('search-status').innerText === 'No match for “absent”.'");
    b.screenshot("search-none");
    assert_no_errors(&b);
}

#[test]
fn on_a_phone_the_search_box_is_in_the_drawer_and_a_hit_closes_it() {
    if !browser::available() {
        return;
    }
    let env = Env::new();
    let served = Served::start(&env, turns(), &[]);
    let long = profile(&served);
    for theme in [Theme::Light, Theme::Dark] {
        let b = Browser::open(Window::Phone, theme);
        b.sign_in(&served.url, TOKEN);
        watch_errors(&b);
        b.click("#open-sessions");
        b.wait_for("the drawer", "getComputedStyle(document.getElementById('sessions')).visibility === 'visible'");
        b.type_into("#search-input", "retry policy");
        b.press(ENTER);
        b.wait_for("the hit", &format!("document.querySelector(\"{}\")", hit_of(&long)));
        std::thread::sleep(std::time::Duration::from_millis(300));
        b.check_phone_layout("search hits");
        b.screenshot("search-hits");
        b.click(&hit_of(&long));
        b.wait_for(
            "the drawer to close",
            "getComputedStyle(document.getElementById('sessions')).visibility === 'hidden'",
        );
        let shown = shows_event(&b);
        assert_eq!((shown["seq"].as_u64(), shown["onScreen"].as_bool()), (Some(1), Some(true)), "{shown}");
        b.check_phone_layout("a hit opened");
        b.screenshot("search-opened");
        assert_no_errors(&b);
    }
}
