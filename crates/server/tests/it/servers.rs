//! Two servers on one PostgreSQL database, in one process: any server
//! serves any client. A WebSocket client of server B streams a run server
//! A runs and answers its question through B; B lists the question while
//! it waits, and no more once it is answered. A run's frames go to the
//! other servers only while a client of one of them watches its session.

use serde_json::{Value, json};
use seri_server::ServerConfig;

use crate::support::{Server, fresh_postgres_url, text};

/// A fresh schema on the suite's PostgreSQL database, or `None` (skip)
/// when there is none and none is required.
#[allow(clippy::print_stderr, reason = "the note says why the test did nothing")]
fn shared_database() -> Option<String> {
    let url = fresh_postgres_url();
    if url.is_none() {
        let required = std::env::var_os("SERI_REQUIRE_POSTGRES").is_some_and(|v| v == "1");
        assert!(!required, "SERI_REQUIRE_POSTGRES=1 but SERI_TEST_POSTGRES_URL is not set: run `cargo xtask postgres`");
        eprintln!("skipped: two servers need one PostgreSQL database (run `cargo xtask postgres test`)");
    }
    url
}

fn bash(id: &str, command: &str) -> Value {
    json!({ "tool_calls": [{ "id": id, "name": "bash", "arguments": { "command": command } }] })
}

#[tokio::test]
async fn a_client_of_one_server_streams_a_run_another_runs_and_answers_its_question() {
    let Some(url) = shared_database() else { return };
    // The model writes a little before its call, as a slow model would: B's
    // watch reaches A through the database a moment after B said
    // "subscribed", and A relays a run's frames only once it knows (frames
    // before that are not resent; under a loaded machine the whole turn
    // could otherwise come and go before then).
    let mut first = bash("b1", "echo allowed");
    first["chunks"] = json!(["Let me ", "run it."]);
    first["delay_ms"] = json!(300);
    let turns = json!([first, text("Done.")]);
    let a = Server::on(turns.clone(), ServerConfig::default(), Some(&url)).await;
    let b = Server::on(turns, ServerConfig::default(), Some(&url)).await;
    let session = a.session().await;
    let mut ws = b.ws().await;
    ws.subscribe(json!({ "type": "subscribe", "sessionId": session })).await;

    // A runs the message it was sent; B's client hears the run and its question.
    let waiting = a.say(&session, "Run it.");
    let answering = async {
        let frames = ws.collect_until(|f| f["type"] == "approval-requested").await;
        let streamed: Vec<&Value> = frames.iter().filter(|f| f["type"] == "run-event").collect();
        assert!(!streamed.is_empty(), "B's client streams A's run: {frames:?}");
        let asked = frames.last().unwrap().clone();
        assert_eq!((asked["callId"].as_str(), asked["tool"].as_str()), (Some("b1"), Some("bash")));
        assert_eq!(asked["arguments"], json!({ "command": "echo allowed" }));
        let run = asked["runId"].as_str().unwrap().to_owned();
        assert!(streamed.iter().all(|f| f["runId"] == run.as_str()), "{streamed:?}");

        // B lists the question A's run asks, and answers it there.
        let listed = b.get_json(&format!("/api/sessions/{session}/approvals")).await;
        assert_eq!(listed["approvals"], json!([asked]));
        let wrong = b.post(&format!("/api/runs/{run}/approvals/nope"), json!({ "allow": true })).send().await.unwrap();
        assert_eq!(wrong.status(), 404, "no server has that question");
        let answered = b.post_json(&format!("/api/runs/{run}/approvals/b1"), json!({ "allow": true })).await;
        assert_eq!(answered, json!({ "answered": true }));
        run
    };
    let (answer, run) = tokio::join!(waiting, answering);
    assert_eq!(answer["result"], "Done.");
    assert_eq!(answer["runId"], run.as_str());
    let thread = b.thread(&session).await;
    assert!(thread.contains("tool result bash: exit code: 0\n  stdout:\n  allowed"), "{thread}");

    // The question waits no more, on B either.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let listed = b.get_json(&format!("/api/sessions/{session}/approvals")).await;
        if listed == json!({ "approvals": [] }) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "B still lists an answered question: {listed}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let again = b.post(&format!("/api/runs/{run}/approvals/b1"), json!({ "allow": true })).send().await.unwrap();
    assert_eq!(again.status(), 404, "an answered question is answered once");
    a.stop().await;
    b.stop().await;
}

#[tokio::test]
async fn a_post_retried_on_another_server_is_answered_when_the_store_tells_its_job_ended() {
    let Some(url) = shared_database() else { return };
    // No poll worth the name: only the store telling that A's job ended
    // can end B's wait in time.
    let config = ServerConfig { job_poll: std::time::Duration::from_secs(3600), ..ServerConfig::default() };
    let turns = json!([bash("b1", "echo allowed"), text("Done.")]);
    let a = Server::on(turns.clone(), config.clone(), Some(&url)).await;
    let b = Server::on(turns, config, Some(&url)).await;
    let session = a.session().await;
    let mut ws = a.ws().await;
    ws.subscribe(json!({ "type": "subscribe", "sessionId": session })).await;
    let path = format!("/api/sessions/{session}/messages");
    let body = json!({ "text": "Run it." });
    let post = |server: &Server| server.post(&path, body.clone()).header("Idempotency-Key", "k-1").send();

    // A runs the message; its run waits on a question until it is answered.
    let first = post(&a);
    let rest = async {
        let asked = ws.collect_until(|f| f["type"] == "approval-requested").await.pop().unwrap();
        // The client lost A's answer and posts again, to B: B waits on A's job.
        let before = b.store.work().unwrap();
        let again = post(&b);
        let answer = async {
            // B found the job under the key, and read it again once listening.
            while b.store.work().unwrap().transactions < before.transactions + 2 {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            // Time for a poll to show itself: reading the job on a timer
            // would count more reads the longer the run takes; told, B
            // reads it as often whatever the run takes.
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            let run = asked["runId"].as_str().unwrap();
            a.post_json(&format!("/api/runs/{run}/approvals/b1"), json!({ "allow": true })).await
        };
        let (again, answered) = tokio::join!(again, answer);
        assert_eq!(answered, json!({ "answered": true }));
        (again.unwrap(), b.store.work().unwrap() - before)
    };
    let (first, (again, waited)) = tokio::join!(first, rest);
    let first = first.unwrap();
    assert_eq!((first.status().as_u16(), again.status().as_u16()), (200, 200));
    let (first, again): (Value, Value) = (first.json().await.unwrap(), again.json().await.unwrap());
    assert_eq!(first["result"], "Done.", "{first}");
    assert_eq!(again, first, "B answers what A answered");
    // B read the job three times: found under its key, read again once
    // listening, and once more when the store told it ended.
    assert_eq!(waited.transactions, 3, "{waited:?}");
    a.stop().await;
    b.stop().await;
}

/// An outside client on the relay's channel: what the servers send each other.
struct Eavesdropper {
    heard: tokio::sync::mpsc::UnboundedReceiver<serde_json::Value>,
    /// Its own connection, which can speak on the relay too.
    client: tokio_postgres::Client,
    channel: String,
}

impl Eavesdropper {
    async fn on(url: &str) -> Eavesdropper {
        use futures_util::StreamExt as _;
        let (client, mut connection) =
            url.parse::<tokio_postgres::Config>().unwrap().connect(tokio_postgres::NoTls).await.unwrap();
        let (tell, heard) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
            while let Some(Ok(message)) = messages.next().await {
                if let tokio_postgres::AsyncMessage::Notification(note) = message {
                    // "<id> <part> <parts> <body>"; the test's messages are one part each.
                    let body = note.payload().splitn(4, ' ').nth(3).unwrap_or_default().to_owned();
                    let mut message = serde_json::from_str(&body).unwrap_or(Value::Null);
                    // Which connection sent it: a server's relay.
                    message["backend"] = json!(note.process_id());
                    let _ = tell.send(message);
                }
            }
        });
        let channel: String = client.query_one("SELECT 'seri_relay:' || current_schema()", &[]).await.unwrap().get(0);
        client.batch_execute(&format!("LISTEN \"{channel}\"")).await.unwrap();
        Eavesdropper { heard, client, channel }
    }

    /// Waits until the server whose clients watch `marker` has taken in
    /// everything relayed before now: says hello as a new server would,
    /// and waits for that server's answer (what its clients watch). A
    /// server takes in what is relayed in order, so once it answered, it
    /// heard all that came before the hello too; the eavesdropper hearing
    /// a message does not mean the servers have.
    async fn settled(&mut self, marker: &str) {
        let hello = json!({ "type": "hello", "server": "eavesdropper" }).to_string();
        self.client.execute("SELECT pg_notify($1, $2)", &[&self.channel, &format!("1 0 1 {hello}")]).await.unwrap();
        self.until(|m| {
            m["type"] == "watches" && m["sessions"].as_array().is_some_and(|s| s.iter().any(|pair| pair[1] == marker))
        })
        .await;
    }

    /// What was relayed up to and with the first message `until` matches.
    async fn until(&mut self, until: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut heard = Vec::new();
        loop {
            let message = tokio::time::timeout(std::time::Duration::from_secs(60), self.heard.recv())
                .await
                .unwrap_or_else(|_| panic!("not relayed within a minute; heard {heard:#?}"))
                .unwrap();
            let done = until(&message);
            heard.push(message);
            if done {
                return heard;
            }
        }
    }
}

/// A server's relay connection dropped (the database restarted, its
/// backend was terminated): what the others said meanwhile was lost to it.
/// Connected again, it says hello, and the others say again which sessions
/// their clients watch, so its runs stream to them at once rather than
/// after their next refresh.
#[tokio::test]
async fn a_server_whose_relay_reconnects_says_hello_and_hears_again_what_the_others_watch() {
    let Some(url) = shared_database() else { return };
    let a = Server::on(json!([]), ServerConfig::default(), Some(&url)).await;
    let b = Server::on(json!([]), ServerConfig::default(), Some(&url)).await;
    let (session, marker) = (a.session().await, a.session().await);
    let mut relay = Eavesdropper::on(&url).await;
    // A client of A watches a session: A says so, through its relay's connection.
    let mut own = a.ws().await;
    own.subscribe(json!({ "type": "subscribe", "sessionId": marker })).await;
    let said = relay.until(|m| watching(m, &marker, true)).await;
    let (a_name, a_backend) = (said.last().unwrap()["server"].clone(), said.last().unwrap()["backend"].clone());
    let mut ws = b.ws().await;
    ws.subscribe(json!({ "type": "subscribe", "sessionId": session })).await;
    relay.until(|m| watching(m, &session, true)).await;

    let (admin, connection) =
        url.parse::<tokio_postgres::Config>().unwrap().connect(tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    let backend = i32::try_from(a_backend.as_i64().unwrap()).unwrap();
    admin.execute("SELECT pg_terminate_backend($1)", &[&backend]).await.unwrap();
    let heard = relay.until(|m| m["type"] == "hello" && m["server"] == a_name).await;
    assert_ne!(heard.last().unwrap()["backend"], a_backend, "a new connection: {heard:#?}");
    // B answers with what its client watches.
    relay
        .until(|m| {
            m["type"] == "watches"
                && m["sessions"].as_array().is_some_and(|s| s.iter().any(|s| s[1].as_str() == Some(session.as_str())))
        })
        .await;
    a.stop().await;
    b.stop().await;
}

fn watching(message: &Value, session: &str, on: bool) -> bool {
    message["type"] == "watching" && message["session"] == session && message["on"] == on
}

#[tokio::test]
async fn a_run_is_relayed_to_the_other_servers_only_while_a_client_of_one_watches_it() {
    let Some(url) = shared_database() else { return };
    let turns = json!([text("One."), text("Two."), text("Three.")]);
    let a = Server::on(turns.clone(), ServerConfig::default(), Some(&url)).await;
    let b = Server::on(turns, ServerConfig::default(), Some(&url)).await;
    let (session, marker) = (a.session().await, a.session().await);
    let mut relay = Eavesdropper::on(&url).await;
    let run_events = |heard: &[Value]| heard.iter().filter(|m| m["type"] == "run-event").count();

    // Nobody watches: A's run sends nothing to B. A's relay is one queue in
    // order, so once its word about a client of its own is heard, whatever
    // it relayed of the run before has been heard too.
    assert_eq!(a.say(&session, "First.").await["result"], "One.");
    let mut own = a.ws().await;
    own.subscribe(json!({ "type": "subscribe", "sessionId": marker })).await;
    let heard = relay.until(|m| watching(m, &marker, true)).await;
    assert_eq!(run_events(&heard), 0, "{heard:#?}");

    // A client of B watches: B says so, and A's run streams to it.
    let mut ws = b.ws().await;
    ws.subscribe(json!({ "type": "subscribe", "sessionId": session })).await;
    relay.until(|m| watching(m, &session, true)).await;
    relay.settled(&marker).await;
    let answer = a.say(&session, "Second.").await;
    assert_eq!(answer["result"], "Two.");
    let run = answer["runId"].as_str().unwrap();
    let frames = ws.collect_until(|f| f["type"] == "run-event" && f["event"]["type"] == "run_finished").await;
    assert!(frames.iter().filter(|f| f["type"] == "run-event").all(|f| f["runId"] == run), "{frames:#?}");
    assert!(frames.iter().any(|f| f["event"]["type"] == "run_started"), "the whole run: {frames:#?}");

    // The client goes: B says so, and A relays no more.
    drop(ws);
    relay.until(|m| watching(m, &session, false)).await;
    relay.settled(&marker).await;
    assert_eq!(a.say(&session, "Third.").await["result"], "Three.");
    own.subscribe(json!({ "type": "unsubscribe", "sessionId": marker })).await;
    let heard = relay.until(|m| watching(m, &marker, false)).await;
    assert_eq!(run_events(&heard), 0, "{heard:#?}");
    a.stop().await;
    b.stop().await;
}
