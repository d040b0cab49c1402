//! A real headless Chromium, driven over WebDriver by a chromedriver of its
//! own on a loopback port: what the web UI's tests click through.
//!
//! Debian's `chromium` and `chromium-driver` provide both (`.ci/run`
//! installs them). Without them the browser tests are skipped with a line on
//! stderr, unless `SERI_REQUIRE_BROWSER=1` (as `cargo xtask ci` sets), when
//! a missing browser fails them.
//!
//! Every screenshot a test keeps is a page state checked first: axe-core
//! (npm, the version `xtask/webui`'s lock pins; `cargo xtask ci` installs it
//! and names it in `SERI_TEST_AXE`) is injected into the page and any
//! serious or critical violation fails the test, in whichever theme and
//! size the window has.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

/// How long a page gets to show what a test waits for.
const PATIENCE: Duration = Duration::from_secs(30);

fn chromedriver() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join("chromedriver")).find(|p| p.is_file())
}

fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

#[allow(clippy::print_stderr, reason = "the note says why the browser checks did nothing")]
/// Whether the browser checks can run here; `false` comes with a line on
/// stderr saying they do not, and a required browser that is missing fails.
pub(crate) fn available() -> bool {
    if chromedriver().is_some() && chromium().is_some() {
        return true;
    }
    assert!(
        std::env::var_os("SERI_REQUIRE_BROWSER").is_none(),
        "SERI_REQUIRE_BROWSER is set but chromium or chromedriver is missing (apt-get install chromium chromium-driver)"
    );
    // The caller decides what happens without a browser: a test may stop
    // there or go on without its page.
    eprintln!("no chromium and chromedriver on this machine: this test's browser checks do not run");
    false
}

/// axe-core's browser build: `SERI_TEST_AXE`, else where `cargo xtask ci`
/// installs it (`target/webui/node_modules`). Without it the pages are not
/// checked (a line on stderr says so), unless `SERI_REQUIRE_BROWSER=1`.
#[allow(clippy::print_stderr, reason = "the note says why the check did nothing")]
fn axe_source() -> Option<String> {
    let path = std::env::var_os("SERI_TEST_AXE").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/webui/node_modules/axe-core/axe.min.js")
    });
    match std::fs::read_to_string(&path) {
        Ok(source) => Some(source),
        Err(e) => {
            assert!(
                std::env::var_os("SERI_REQUIRE_BROWSER").is_none(),
                "SERI_REQUIRE_BROWSER is set but axe-core is not at {} ({e}): run `cargo xtask ci`, or npm ci in xtask/webui and set SERI_TEST_AXE",
                path.display()
            );
            eprintln!(
                "accessibility not checked: no axe-core at {} (npm ci in xtask/webui, or SERI_TEST_AXE)",
                path.display()
            );
            None
        }
    }
}

/// The window a test asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Window {
    /// 1280 × 860, a mouse.
    Desktop,
    /// 390 × 844 CSS pixels with touch, as a phone (Chromium's device
    /// emulation: a headless window cannot be narrower than 500 px).
    Phone,
}

/// The colour scheme the page is asked for (`prefers-color-scheme`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Theme {
    Light,
    Dark,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// One browser window with its own profile (so its own cookies), and the
/// runtime its WebDriver calls run on.
pub(crate) struct Browser {
    driver: Child,
    client: Option<Client>,
    runtime: tokio::runtime::Runtime,
    /// axe-core's source, when it is installed.
    axe: Option<String>,
    /// `-phone`, `-dark`: added to screenshot names.
    suffix: String,
}

impl Browser {
    /// A desktop window in the light theme.
    pub(crate) fn start() -> Self {
        Self::open(Window::Desktop, Theme::Light)
    }

    /// A window of `window`'s size in `theme`.
    pub(crate) fn open(window: Window, theme: Theme) -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let port = free_port();
        let driver = Command::new(chromedriver().unwrap())
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // The machine's network is closed: no background traffic.
        let mut args = vec![
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1280,860",
        ];
        if theme == Theme::Dark {
            // Blink's preferred colour scheme: 0 is dark.
            args.push("--blink-settings=preferredColorScheme=0");
        }
        let mut options = json!({ "binary": chromium().unwrap(), "args": args });
        if window == Window::Phone {
            options["mobileEmulation"] =
                json!({ "deviceMetrics": { "width": 390, "height": 844, "pixelRatio": 1, "touch": true } });
        }
        let capabilities = json!({ "browserName": "chrome", "goog:chromeOptions": options });
        let capabilities = capabilities.as_object().unwrap().clone();
        let url = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + PATIENCE;
        let client = runtime.block_on(async {
            loop {
                let connector = hyper_util::client::legacy::connect::HttpConnector::new();
                match ClientBuilder::new(connector).capabilities(capabilities.clone()).connect(&url).await {
                    Ok(client) => break client,
                    Err(e) => {
                        assert!(Instant::now() < deadline, "chromedriver did not start a browser: {e}");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                }
            }
        });
        let suffix = format!(
            "{}{}",
            if window == Window::Phone { "-phone" } else { "" },
            if theme == Theme::Dark { "-dark" } else { "" }
        );
        Self { driver, client: Some(client), runtime, axe: axe_source(), suffix }
    }

    fn client(&self) -> &Client {
        self.client.as_ref().unwrap()
    }

    pub(crate) fn goto(&self, url: &str) {
        self.runtime.block_on(self.client().goto(url)).unwrap();
    }

    /// Runs `script` (a function body; `arguments` are `args`) in the page.
    pub(crate) fn js(&self, script: &str, args: Vec<Value>) -> Value {
        self.runtime.block_on(self.client().execute(script, args)).unwrap()
    }

    /// Runs `script` asynchronously: it ends by calling its last argument
    /// with the result.
    pub(crate) fn js_async(&self, script: &str, args: Vec<Value>) -> Value {
        self.runtime.block_on(self.client().execute_async(script, args)).unwrap()
    }

    /// Waits until `expression` (JavaScript) is truthy; returns its value.
    #[track_caller]
    pub(crate) fn wait_for(&self, what: &str, expression: &str) -> Value {
        let script = format!("try {{ return ({expression}); }} catch (e) {{ return null; }}");
        let deadline = Instant::now() + PATIENCE;
        loop {
            let value = self.js(&script, vec![]);
            let truthy = match &value {
                Value::Null => false,
                Value::Bool(b) => *b,
                Value::String(s) => !s.is_empty(),
                Value::Number(n) => n.as_f64() != Some(0.0),
                _ => true,
            };
            if truthy {
                return value;
            }
            if Instant::now() > deadline {
                let body = self.js("return document.body ? document.body.innerText : ''", vec![]);
                panic!("the page never showed {what} ({expression}); it shows:\n{}", body.as_str().unwrap_or_default());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The text of the first element `css` matches (waiting for it).
    #[track_caller]
    pub(crate) fn text(&self, css: &str) -> String {
        let expression = format!("document.querySelector({css:?}) && document.querySelector({css:?}).innerText");
        self.wait_for(css, &expression).as_str().unwrap_or_default().to_owned()
    }

    /// Clicks the first element `css` matches. A live page may redraw it
    /// between finding and clicking (a stale element): then it is found
    /// again, until the patience runs out.
    #[track_caller]
    pub(crate) fn click(&self, css: &str) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            self.wait_for(css, &format!("document.querySelector({css:?})"));
            let clicked = self.runtime.block_on(async {
                let element = self.client().find(Locator::Css(css)).await?;
                element.click().await
            });
            match clicked {
                Ok(()) => return,
                Err(e) if Instant::now() < deadline => {
                    let _ = e;
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(e) => panic!("cannot click {css}: {e}"),
            }
        }
    }

    /// Types `text` into the element `css` names, as keystrokes.
    #[track_caller]
    pub(crate) fn type_into(&self, css: &str, text: &str) {
        self.wait_for(css, &format!("document.querySelector({css:?})"));
        self.runtime
            .block_on(async {
                let element = self.client().find(Locator::Css(css)).await?;
                element.send_keys(text).await
            })
            .unwrap();
    }

    /// The browser's cookies, as the WebDriver reports them (HttpOnly too).
    pub(crate) fn cookies(&self) -> Vec<(String, bool, Option<String>)> {
        self.runtime
            .block_on(self.client().get_all_cookies())
            .unwrap()
            .into_iter()
            .map(|c| (c.name().to_owned(), c.http_only().unwrap_or(false), c.same_site().map(|s| s.to_string())))
            .collect()
    }

    /// Checks the page as it is now with axe-core, then saves a screenshot
    /// as `target/web-ui/NAME.png` (`NAME-phone`, `NAME-dark`…) for a
    /// reviewer: every state a test keeps is a state checked.
    #[track_caller]
    pub(crate) fn screenshot(&self, name: &str) {
        self.check_accessibility(name);
        let png = self.runtime.block_on(self.client().screenshot()).unwrap();
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/web-ui");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}{}.png", self.suffix)), png).unwrap();
    }

    /// Runs axe-core over the whole page; any serious or critical
    /// violation fails, naming the rule, what it asks and where.
    #[track_caller]
    pub(crate) fn check_accessibility(&self, state: &str) {
        let Some(axe) = &self.axe else { return };
        if self.js("return typeof window.axe === 'object'", vec![]) != Value::Bool(true) {
            // Through WebDriver, so the page's Content-Security-Policy (no
            // inline scripts) does not apply to the checker itself.
            self.js(&format!("{axe}\n;return true;"), vec![]);
        }
        let found = self.js_async(
            "const done = arguments[arguments.length - 1];\
             window.axe.run(document, { resultTypes: ['violations'] }).then((r) => done(r.violations\
               .filter((v) => v.impact === 'serious' || v.impact === 'critical')\
               .map((v) => `${v.impact} ${v.id}: ${v.help}\\n` + v.nodes.slice(0, 5)\
                 .map((n) => `    at ${n.target.join(' ')}: ${(n.failureSummary || '').replace(/\\s+/g, ' ')}`).join('\\n'))),\
               (e) => done([`axe failed: ${e}`]));",
            vec![],
        );
        let found: Vec<String> = serde_json::from_value(found).unwrap();
        assert!(found.is_empty(), "accessibility ({state}{}): {}", self.suffix, found.join("\n"));
    }

    /// Fails when the page scrolls sideways or a control a finger uses is
    /// smaller than 44 × 44 px (links inside prose excepted).
    #[track_caller]
    pub(crate) fn check_phone_layout(&self, state: &str) {
        let wide = self.js("return [document.documentElement.scrollWidth, window.innerWidth]", vec![]);
        assert!(wide[0].as_u64() <= wide[1].as_u64(), "{state}: the page is wider than the screen: {wide}");
        let small = self.js(
            "return [...document.querySelectorAll('button, a[href], summary, input:not([type=file]), textarea, select, [tabindex]:not([tabindex=\"-1\"])')]\
               .filter((e) => !e.closest('.markdown') && e.getClientRects().length && getComputedStyle(e).visibility !== 'hidden')\
               .filter((e) => { const r = e.getBoundingClientRect(); return r.width < 44 || r.height < 44; })\
               .map((e) => `${e.tagName.toLowerCase()}.${e.className} “${(e.innerText || e.getAttribute('aria-label') || '').slice(0, 30)}” ${Math.round(e.getBoundingClientRect().width)}×${Math.round(e.getBoundingClientRect().height)}`)",
            vec![],
        );
        assert_eq!(small, json!([]), "{state}: touch targets under 44 px");
    }

    /// Presses `chord` at the page, wherever the focus is: each character
    /// (a WebDriver key code point, or text) goes down in order, then all
    /// come up in reverse, so `{ALT}{DOWN}` is Alt+↓.
    pub(crate) fn press(&self, chord: &str) {
        use fantoccini::actions::{InputSource as _, KeyAction, KeyActions};
        let mut keys = KeyActions::new("keyboard".to_owned());
        for value in chord.chars() {
            keys = keys.then(KeyAction::Down { value });
        }
        for value in chord.chars().rev() {
            keys = keys.then(KeyAction::Up { value });
        }
        self.runtime.block_on(self.client().perform_actions(keys)).unwrap();
    }

    /// Signs in at `url` with `token` through the form.
    pub(crate) fn sign_in(&self, url: &str, token: &str) {
        self.goto(url);
        self.type_into("#token", token);
        self.click("#sign-in button[type=submit]");
        self.wait_for("the app", "document.getElementById('session-list')");
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            let _ = self.runtime.block_on(client.close());
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
