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
from seri_client.api.sessions import create_session, get_session, post_message, events
from seri_client.models import CreateSessionParams, MessageParams


def fail(message):
    print(f"client check: {message}", file=sys.stderr)
    sys.exit(1)


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
    }
    if document is not None:
        mapping = document["components"]["schemas"]["ServerFrame"]["discriminator"]["mapping"]
        if set(mapping) != set(frames):
            fail(f"the document's frames {sorted(mapping)} are not the ones checked here {sorted(frames)}")

    client = AuthenticatedClient(base_url=url, token=token, raise_on_unexpected_status=True)
    created = create_session.sync(client=client, body=CreateSessionParams(title="Client check"))
    if not isinstance(created, models.CreatedSessionResponse):
        fail(f"POST /api/sessions answered {created!r}")
    # The session view is an object the document does not break down yet.
    session_id = created.session["id"]

    # A real conversation over the WebSocket: every frame parses into its model.
    ws_url = url.replace("http://", "ws://") + f"/api/ws?token={token}"
    seen = {}
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
            if frame.to_dict() != raw:
                fail(f"{raw['type']} does not survive its model: {raw} became {frame.to_dict()}")
            seen.setdefault(raw["type"], frame)
            if raw["type"] == "run-event" and raw["event"].get("type") == "run_finished":
                break
    for wanted in ["subscribed", "run-event"]:
        if wanted not in seen:
            fail(f"no {wanted} frame arrived; saw {sorted(seen)}")
    run_event = seen["run-event"]
    if run_event.session_id != session_id or not run_event.run_id:
        fail(f"run-event frame fields: {run_event!r}")

    shown = get_session.sync(client=client, id=session_id)
    if not isinstance(shown, models.SessionResponse):
        fail(f"GET /api/sessions/{{id}} answered {shown!r}")
    page = events.sync(client=client, id=session_id)
    if not isinstance(page, models.EventsResponse) or not page.events:
        fail(f"GET events answered {page!r}")
    first = page.events[0]
    print(
        f"client check: typed frames {sorted(type(f).__name__ for f in seen.values())}; "
        f"session {session_id} with context window {shown.context_window}; "
        f"{len(page.events)} events, the first {type(first).__name__} seq {first.seq}"
    )


if __name__ == "__main__":
    main()
