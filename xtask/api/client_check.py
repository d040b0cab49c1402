"""The Python client openapi-python-client generated from
crates/server/openapi.json, used against a real `seri serve`.

Run by `cargo xtask api` (and `cargo xtask ci`) as
`client_check.py URL TOKEN` with the generated package `seri_client` on
PYTHONPATH. It fails (exit 1) when the client lacks a typed model for a
frame, or when what the server really sends does not parse into them.
"""

import json
import sys

import websockets.sync.client

from seri_client import AuthenticatedClient, models
from seri_client.api.sessions import create_session, events, get_session, list_sessions, post_message
from seri_client.models import CreateSessionParams, MessageParams


def fail(message):
    print(f"client check: {message}", file=sys.stderr)
    sys.exit(1)


def lost_keys(sent, back, path=""):
    """Keys of `sent` (nested too) that `back` lacks: a model that dropped a
    field. Values are not compared: a model reads times as datetimes."""
    if isinstance(sent, dict) and isinstance(back, dict):
        lost = [f"{path}.{k}" for k in sent if k not in back]
        for k in sent:
            if k in back:
                lost += lost_keys(sent[k], back[k], f"{path}.{k}")
        return lost
    if isinstance(sent, list) and isinstance(back, list):
        return [x for a, b in zip(sent, back) for x in lost_keys(a, b, path + "[]")]
    return []


def untyped(model, path=""):
    """Fields a model kept only as `additional_properties`: the document
    did not name them."""
    found = [f"{path}.{k}" for k in getattr(model, "additional_properties", {})]
    for field in getattr(type(model), "__attrs_attrs__", ()):
        value = getattr(model, field.name)
        if hasattr(value, "additional_properties"):
            found += untyped(value, f"{path}.{field.name}")
    return found


def main():
    url, token = sys.argv[1], sys.argv[2]
    document = json.load(open(sys.argv[3])) if len(sys.argv) > 3 else None

    # A model for every frame the document names, told apart by `type`.
    frames = {
        "session-change": models.SessionChangeFrame,
        "account-change": models.AccountChangeFrame,
        "run-event": models.RunEventFrame,
        "approval-requested": models.ApprovalRequestedFrame,
        "subscribed": models.SubscribedFrame,
        "error": models.ErrorFrame,
        "resync": models.ResyncFrame,
    }
    if document is not None:
        mapping = document["components"]["schemas"]["ServerFrame"]["discriminator"]["mapping"]
        if set(mapping) != set(frames):
            fail(f"the document's frames {sorted(mapping)} are not the ones checked here {sorted(frames)}")
        # And a model for every run event, named as the document names it.
        for tag, ref in document["components"]["schemas"]["StreamEvent"]["discriminator"]["mapping"].items():
            name = ref.rsplit("/", 1)[1]
            if not hasattr(models, name):
                fail(f"no model {name} for the run event {tag}")
        # And for every kind of tool facts a `tool_finished` event and a
        # stored `tool_result` carry, told apart by `kind`.
        for kind, ref in document["components"]["schemas"]["ToolFacts"]["discriminator"]["mapping"].items():
            name = ref.rsplit("/", 1)[1]
            if not hasattr(models, name):
                fail(f"no model {name} for the tool facts {kind}")

    # A `resync` frame, as a socket that fell behind is sent one, parses
    # into its model and loses nothing (a run cannot be made to overflow
    # a queue on purpose here).
    for raw in ({"type": "resync", "sessionId": "01a22b56-d880-7000-8000-000000000001"}, {"type": "resync", "account": True}):
        frame = models.ResyncFrame.from_dict(raw)
        if lost_keys(raw, frame.to_dict()) or untyped(frame):
            fail(f"resync loses {lost_keys(raw, frame.to_dict())} or keeps {untyped(frame)} through its model")

    # A `tool_finished` event with a command's facts, as the server sends
    # it, parses into typed models and loses nothing.
    finished = {
        "type": "tool_finished", "id": "b1", "name": "bash", "is_error": False, "summary": "exit code: 0",
        "facts": {"kind": "command", "command": "true", "exit": "code", "code": 0, "timeout": 120000,
                  "duration": 3, "tail": "", "lines": 0},
    }
    event = models.ToolFinishedEvent.from_dict(finished)
    if not isinstance(event.facts, models.CommandRun) or event.facts.code != 0:
        fail(f"a tool_finished event's facts are not a typed CommandRun: {event.facts!r}")
    lost = lost_keys(finished, event.to_dict())
    if lost or untyped(event):
        fail(f"tool_finished loses {lost} or keeps untyped {untyped(event)} through its model")

    client = AuthenticatedClient(base_url=url, token=token, raise_on_unexpected_status=True)
    created = create_session.sync(client=client, body=CreateSessionParams(title="Client check"))
    if not isinstance(created, models.CreatedSessionResponse):
        fail(f"POST /api/sessions answered {created!r}")
    if not isinstance(created.session, models.SessionInfo) or created.session.title != "Client check":
        fail(f"the created session is not a typed SessionInfo: {created.session!r}")
    session_id = str(created.session.id)

    # A real conversation over the WebSocket: every frame parses into its model.
    ws_url = url.replace("http://", "ws://") + f"/api/ws?token={token}"
    seen = {}
    events_seen = set()
    with websockets.sync.client.connect(ws_url) as ws:
        subscribe = models.SubscribeFrame(type_=models.SubscribeFrameType.SUBSCRIBE, session_id=session_id)
        ws.send(json.dumps(subscribe.to_dict()))
        answer = post_message.sync(
            client=client, id=session_id, body=MessageParams(text="Hello, seri.", wait=False)
        )
        if not isinstance(answer, models.MessageAcceptedResponse):
            fail(f"POST messages answered {answer!r}")
        while True:
            raw = json.loads(ws.recv(timeout=60))
            model = frames.get(raw["type"])
            if model is None:
                fail(f"a frame of an unknown type: {raw}")
            frame = model.from_dict(raw)
            lost = lost_keys(raw, frame.to_dict())
            if lost:
                fail(f"{raw['type']} loses {lost} through its model: {raw} became {frame.to_dict()}")
            if untyped(frame):
                fail(f"{raw['type']} has fields its model does not name: {untyped(frame)}")
            seen.setdefault(raw["type"], frame)
            if raw["type"] == "run-event":
                events_seen.add(type(frame.event).__name__)
            if raw["type"] == "run-event" and raw["event"].get("type") == "run_finished":
                break
    for wanted in ["subscribed", "run-event"]:
        if wanted not in seen:
            fail(f"no {wanted} frame arrived; saw {sorted(seen)}")
    run_event = seen["run-event"]
    if run_event.session_id != session_id or not run_event.run_id:
        fail(f"run-event frame fields: {run_event!r}")
    # The event inside is typed too: the first one a run sends is its start.
    if not isinstance(run_event.event, models.RunStartedEvent) or run_event.event.run_id != run_event.run_id:
        fail(f"the first run-event's event is {run_event.event!r}, not a typed run_started")

    shown = get_session.sync(client=client, id=session_id)
    if not isinstance(shown, models.SessionResponse) or not isinstance(shown.session, models.SessionInfo):
        fail(f"GET /api/sessions/{{id}} answered {shown!r}")
    if shown.session.message_counts.assistant != 1 or not isinstance(shown.session.last_usage, models.Usage):
        fail(f"the session after one answer: {shown.session!r}")
    listed = list_sessions.sync(client=client)
    if not isinstance(listed, models.SessionsResponse) or not all(
        isinstance(s, models.SessionSummary) for s in listed.sessions
    ):
        fail(f"GET /api/sessions answered {listed!r}")
    page = events.sync(client=client, id=session_id)
    if not isinstance(page, models.EventsResponse) or not page.events:
        fail(f"GET events answered {page!r}")
    first = page.events[0]
    print(
        f"client check: typed frames {sorted(type(f).__name__ for f in seen.values())}, "
        f"events {sorted(events_seen)}; "
        f"session {session_id} ({type(shown.session).__name__}, {shown.session.message_counts.assistant} answer, "
        f"context window {shown.context_window}); {len(listed.sessions)} {type(listed.sessions[0]).__name__} listed; "
        f"{len(page.events)} events, the first {type(first).__name__} seq {first.seq}"
    )


if __name__ == "__main__":
    main()
