#!/usr/bin/env python3
"""A stand-in for the OpenCode server on the home machine, for the demo and the tests.

Each flavour answers as that OpenCode version's source defines it (anomalyco/opencode; each
behaviour below names the upstream file it comes from; docs/troubleshooting.md "Which OpenCode
answers" has the commits):

  opencode1      OpenCode 1.x (default): GET /global/health -> {"healthy":true,"version"};
                 GET /global/event -> SSE, first data {"payload":{"type":"server.connected",
                 "properties":{}}}, then server.heartbeat the same way; GET /event -> the same
                 events unwrapped ({"type":...,"properties":{}}) (packages/opencode/src/server/
                 routes/global.ts, routes/event.ts). Other paths: the web app (HTML), as 1.x's
                 catch-all proxies it. With --password, Basic auth on every path: a refusal is
                 an empty 401 with WWW-Authenticate: Basic realm="Secure Area" (1.x's Effect
                 server: packages/opencode/src/server/routes/instance/httpapi/middleware/
                 authorization.ts), or "Unauthorized" as text with --hono-401 (the older Hono
                 server: hono/basic-auth via packages/opencode/src/server/middleware.ts).
  opencode2.0.3  OpenCode 2.0.3: GET /api/health -> {"healthy":true,"version","pid"}
                 (packages/server/src/handlers/health.ts); GET /api/event as below. No
                 /api/info, no /api/status (upstream #49210). Unknown paths: an empty 404
                 (Effect's RouteNotFound).
  opencode2      OpenCode 2 as it ships now (2.0.17, the newest release): GET /api/info ->
                 {"version","pid","urls","paths":{"tmp","home"}} (packages/protocol/src/groups/
                 server.ts, packages/server/src/handlers/server.ts); /api/health is gone (404);
                 unknown /api/... paths an empty 404, every other path the web app (HTML,
                 Cache-Control: no-cache), served for any route the API lacks, outside the API's
                 password check (packages/cli/src/services/web-ui.ts): so GET / answers the web
                 shell without a password.
  other          some other web server (HTML on every path)
  nosse          OpenCode 1.x whose event stream never says server.connected

2.x's event stream, GET /api/event (packages/server/src/handlers/event.ts): chunked
text/event-stream with Cache-Control: no-cache, no-transform, X-Accel-Buffering: no and
X-Content-Type-Options: nosniff; the first frame is `data: {"id":...,"type":"server.connected",
"data":{}}` with no event: line (Effect's encoding/Sse.ts writes none for "message"); heartbeats
are SSE comments `: heartbeat` every 15 s. --heartbeat-first sends one before server.connected
(the heartbeat is a Stream.tick merged with the events; a tick fires at once).

2.x's password (packages/cli/src/env.ts, packages/cli/src/commands/handlers/serve.ts): the one
given with --password; --no-password serves without one (OPENCODE_PASSWORD set but empty);
otherwise a random one is made and printed as "PASSWORD <it>" on stdout (as `opencode serve`
prints "server password <it>"). A refused API call gets 401, WWW-Authenticate: Basic
realm="Secure Area" and {"_tag":"UnauthorizedError","message":"Authentication required"}
(packages/server/src/middleware/authorization.ts). --web-auth puts the web app behind the password
too, with an empty 401 (upstream PR #48217, "require authentication for frontend requests").
--dev-build: /api/info says version "unknown" and pid 0 (handlers/server.ts: `version ??
"unknown"`; groups/server.ts: "0 means the runtime has no OS process identity").
--service [CHANNEL]: plays OpenCode 2's background service (`opencode serve --service`, channel
latest unless named): once listening it registers itself as the service does
(packages/cli/src/services/service-registration.ts): `$XDG_STATE_HOME/opencode/<name>` (default
~/.local/state; <name> per channel as service-config.ts's filename(): service.json for latest, dev,
beta and next, service-local.json, service-<name>.json), compact JSON {"id","version","url","pid",
"password"} with url http://HOST:PORT (a wildcard host as 127.0.0.1), mode 0600, written to a
temporary file and renamed; the file is removed at exit if it is still its own. Its password
(--password, or a random 43-character one, as ServiceConfig.password() makes) is also written to
the settings file `$XDG_CONFIG_HOME/opencode/<name>` ({"password"}, 0600) unless --no-settings.
Pairing (2.x, `opencode pair`): POST /api/pair (behind the password) -> {"code","expires_in":300}
(packages/server/src/pairing.ts: 16 random bytes as base64url, kept 5 minutes, usable once);
GET /auth/connect/<code> is outside the password check (protocol groups/server.ts
isPairingConnectURL) and redeems it (handlers/server.ts): a request whose Accept has text/html
gets a redirect to / with Set-Cookie <name>=<token>; Path=/; HttpOnly; SameSite=Lax; Max-Age=30
days, any other {"token"}; a used or expired code 401 ("This pairing link expired or was already
used. Run `opencode pair` to get a new one." as text for a browser, UnauthorizedError "Pairing
link expired or already used" as JSON otherwise). The cookie's name comes from Host:
opencode_session_<port> with a port, else opencode_session (upstream's sessionCookieName body is
not in the stored sources: this is what 2.0.20/2.0.21 were seen to send). A session is accepted
as the cookie only when the request has no Origin or its Origin's host:port equals Host
(middleware/authorization.ts authorizedSessionCookie), and as the Basic password. The web app
at / fetches /api/info once loaded and shows "API <status> <body>" in #root, as the real one reads
the API with the cookie.
Session events, for tests (not an OpenCode route): POST /standin/emit with {"type", "fields",
"directory"?} (or a JSON array of them, in order) sends that event to every open event stream in its flavour's shape: 2.x
{"id","type","data":fields}; 1.x /event {"id","type","properties":fields}; 1.x /global/event
{"directory","payload":{"id","type","properties"}} (the event names and fields are OpenCode's:
session.status, session.idle, session.error, session.updated, permission.asked, … see
Sources/OCTunnelCore/Notify/AgentSessionWatch.swift). It answers {"streams": N, "peers": [...]}, how many got it and from where each
stream connected (a new stream of the same client shows as a new peer).
Pending permissions and questions (issue 48; they live in the server, not in a connection, so a
client's cut keeps them), per flavour as upstream serves them, each list per project directory
(1.x: the `directory` query or the x-opencode-directory header, else the server's own directory,
packages/opencode/src/server/server.ts; 2.x: `location[directory]` or the same header,
packages/server/src/location.ts requestRef). The stand-in's own directory is /home/me/project.
  1.x   GET /permission -> [Request] with Request {id, sessionID, permission, patterns, metadata,
        always, tool?} (packages/opencode/src/server/instance/permission.ts, permission/index.ts);
        GET /question -> [{id, sessionID, questions, tool?}]; POST /permission/<id>/reply
        {"reply":"once|always|reject","message"?} -> 200 true, also for an id that is not pending
        (Permission.reply returns quietly when it has no such request: 1.x never says "gone");
        the older POST /session/<sid>/permissions/<id> {"response":…} -> 200 true (session.ts,
        deprecated). --old-permission-reply: a 1.x without the new reply route (404).
        A reply value other than once/always/reject: 400 (zod's validator).
  2.x   GET /api/permission/request -> {"location":{"directory","project":{"id","worktree"}},
        "data":[Request]} with Request {id "per_…", sessionID, action, resources, save?, metadata?,
        reason?, source?} (packages/protocol/src/groups/permission.ts, packages/schema/src/
        permission.ts, packages/server/src/handlers/permission.ts); GET /api/question/request the
        same around questions; POST /api/session/<sid>/permission/<id>/reply {"reply","message"?}
        -> 204; an id not pending (or of another session) -> 404 {"_tag":"PermissionNotFoundError",
        "requestID","message":"Permission request not found: <id>"} (protocol/src/errors.ts).
  Question replies (a client's cut keeps the pending questions too; each reply recorded as the
  permissions' are): 1.x POST /question/<id>/reply {"answers":[[label,...],...]} (one array of
  chosen labels per question) and POST /question/<id>/reject (no body) -> 200 true, also for an
  id not pending (Question.reply/reject return quietly: packages/opencode/src/question/index.ts,
  the QuestionRoute of packages/opencode/src/server); 2.x POST /api/session/<sid>/question/<id>/
  reply (the same body) and .../reject -> 204, an id not pending or of another session -> 404
  {"_tag":"QuestionNotFoundError","requestID","message":"Question request not found: <id>"}
  (packages/protocol/src/groups/question.ts, packages/server/src/handlers/question.ts). A reply
  whose body is not {"answers": [[string]]}: 400. A reply taken sends question.replied
  {sessionID, requestID, answers}, a reject question.rejected {sessionID, requestID}.
  Ids are OpenCode's ascending ones: "per_" + 12 hex digits of (ms * 0x1000 + counter) mod 2^48 +
  14 base62 characters (Identifier.ascending), so a client can tell how long ago it was asked.
Sessions: 1.x GET /session/<id> -> {"id","title","directory"} (404 NotFoundError), 2.x GET
/api/session/<id> -> {"data":{…}} (404 SessionNotFoundError), for the sessions a test named.
For tests (not OpenCode routes): POST /standin/permission {"sessionID","permission"?,"patterns"?,
"metadata"?,"always"?,"directory"?,"id"?,"title"?,"emit"?: true} adds a pending request (the flavour's
shape) and, unless emit is false, sends its permission.asked event to every stream as
/standin/emit does; it answers {"id","streams"}. POST /standin/question likewise with
{"sessionID","questions"}. POST /standin/forget empties the tables (OpenCode restarted).
1.x GET /session/status -> {sessionID: {"type":"busy"|"retry"|…}} for the directory's sessions
that are not idle (packages/opencode/src/session/status.ts: the map drops a session set idle),
kept from the session.status events sent; POST /standin/status {"sessionID","type","directory"?}
changes it without an event (a session that finished while no stream listened).
2.x's session activity and durable logs (issue 48: what finished while no stream listened): every
durable session event sent with /standin/emit (packages/schema/src/session-event.ts, e.g.
session.execution.started|succeeded|failed|interrupted) is also committed to its session's log with
seq 1, 2, … (a session's log lives in the server: a client's cut keeps it), and the live event carries
the same envelope {"id","created" (ms),"durable":{"aggregateID","seq","version"}} beside "type" and
"data" (packages/schema/src/event.ts). GET /api/session/active -> {"data":{sessionID:{"type":
"running"}},"watermarks":{sessionID: seq}}: the sessions whose execution started and has not ended;
GET /api/session/<id>/log?after=SEQ -> SSE `data: <entry>` for each entry with seq > SEQ, then
`data: {"type":"log.synced","aggregateID","seq"?}`, and the body ends (no follow=true) (packages/
protocol/src/groups/session.ts session.active and session.log, packages/server/src/handlers/
session.ts, packages/schema/src/event-log.ts); a session never heard of 404 SessionNotFoundError.
Both behind the password.
GET /standin/replies -> {"replies":[{"method","path","body","status"}]}: every reply received.
User: --username (default "opencode"). --port 0 picks a free port; the last line on stdout at
start is "LISTENING <port>". /bytes/N (every flavour, behind the password) answers N bytes, for
the tunnel's own tests.
"""
import argparse
import base64
import json
import os
import queue
import threading
import secrets
import select
import signal
import socket
import sys
import tempfile
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# packages/schema/src/session-event.ts: the session events that are Event.durable (the deltas are
# ephemeral, live only).
DURABLE_SESSION_EVENTS = {
    "session.agent.selected", "session.model.selected", "session.moved", "session.renamed", "session.forked",
    "session.prompt.promoted", "session.prompt.admitted", "session.execution.started", "session.execution.succeeded",
    "session.execution.failed", "session.execution.interrupted", "session.instructions.updated", "session.synthetic",
    "session.skill.activated", "session.shell.started", "session.shell.ended", "session.step.started",
    "session.step.ended", "session.step.failed", "session.text.started", "session.text.ended",
    "session.reasoning.started", "session.reasoning.ended", "session.tool.input.started", "session.tool.input.ended",
    "session.tool.called", "session.tool.progress", "session.tool.success", "session.tool.failed",
    "session.retry.scheduled", "session.compaction.started", "session.compaction.ended", "session.revert.staged",
    "session.revert.cleared", "session.revert.committed"}
FLAVOURS = ["opencode1", "opencode2.0.3", "opencode2", "other", "nosse"]
WEB_APP = ("<!doctype html><html><head><title>OpenCode</title></head><body><div id=\"root\"></div>"
           "<script>fetch('/api/info').then(r => r.text().then(t => { document.getElementById('root').textContent = "
           "'API ' + r.status + ' ' + t; }))</script></body></html>")
SESSION_SECONDS = 30 * 24 * 3600
PAIR_SECONDS = 300


def compact(value):
    """JSON as JSON.stringify and Effect write it: no spaces."""
    return json.dumps(value, separators=(",", ":"))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=4096)
    parser.add_argument("--flavor", "--flavour", dest="flavor", choices=FLAVOURS,
                        default=os.environ.get("OPENCODE_FLAVOUR", "opencode1"))
    parser.add_argument("--version", dest="server_version", default=None)
    parser.add_argument("--password", default=None)
    parser.add_argument("--no-password", action="store_true", help="2.x: no password (OPENCODE_PASSWORD set but empty)")
    parser.add_argument("--hono-401", action="store_true", help="1.x: refuse with the Hono server's \"Unauthorized\" text")
    parser.add_argument("--web-auth", action="store_true", help="2.x: the web app behind the password too (empty 401)")
    parser.add_argument("--heartbeat-first", action="store_true", help="2.x: a ': heartbeat' comment before server.connected")
    parser.add_argument("--dev-build", action="store_true", help="2.x: /api/info says version \"unknown\" and pid 0")
    parser.add_argument("--username", default="opencode")
    parser.add_argument("--heartbeat", type=float, default=None,
                        help="seconds between SSE heartbeats (default: 10 for 1.x, 15 for 2.x, as the source)")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--service", nargs="?", const="latest", default=None, metavar="CHANNEL",
                        help="2.x: register as the background service of CHANNEL (default latest)")
    parser.add_argument("--no-settings", action="store_true", help="--service: write no settings file")
    parser.add_argument("--old-permission-reply", action="store_true",
                        help="1.x: no POST /permission/<id>/reply (404), only the older session route")
    args = parser.parse_args()
    if args.service and not args.password and not args.no_password:
        args.password = secrets.token_urlsafe(32)
    two = args.flavor.startswith("opencode2")
    version = args.server_version or {"opencode2.0.3": "2.0.3", "opencode2": "2.0.17"}.get(args.flavor, "1.0.0")
    if args.dev_build:
        version = "unknown"
    heartbeat = args.heartbeat if args.heartbeat is not None else (15.0 if two else 10.0)
    if two and not args.password and not args.no_password:
        args.password = secrets.token_urlsafe(18)
        print(f"PASSWORD {args.password}", flush=True)
    state = {"port": args.port}
    codes, sessions = {}, {}
    subscribers, subscribers_lock = [], threading.Lock()
    # Pending permissions and questions: directory -> id -> request (the flavour's shape).
    pending = {"permission": {}, "question": {}}
    session_titles = {}
    # 1.x's session statuses per directory: directory -> sessionID -> {"type": …}; idle ones are
    # dropped (packages/opencode/src/session/status.ts: set deletes an idle session from the map).
    statuses = {}
    replies, table_lock = [], threading.Lock()
    # 2.x's durable session logs: sessionID -> [entry] with seq 1, 2, … per session (kept across a
    # client's cut: they live in the server), and the sessions whose execution runs.
    logs, active = {}, set()
    home_directory = "/home/me/project"
    counter = {"ms": 0, "n": 0}

    def ascending(prefix):
        """Identifier.ascending: 12 hex digits of (ms * 0x1000 + counter) mod 2^48, 14 base62."""
        ms = int(time.time() * 1000)
        counter["n"] = counter["n"] + 1 if counter["ms"] == ms else 1
        counter["ms"] = ms
        value = (ms * 0x1000 + counter["n"]) & ((1 << 48) - 1)
        alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
        return f"{prefix}_{value:012x}" + "".join(secrets.choice(alphabet) for _ in range(14))

    def take_pending(kind, ident, session):
        """Pops the pending `kind` ("permission", "question") `ident` from the directory's table that
        holds it, if it is `session`'s (any session's when None); None when none does."""
        with table_lock:
            for table in pending[kind].values():
                request = table.get(ident)
                if request is not None and (session is None or request["sessionID"] == session):
                    return table.pop(ident)
        return None

    def note_status(event):
        """Keeps 1.x's status map as OpenCode does: what a session.status event says, idle dropped."""
        fields = event.get("fields") or {}
        if event.get("type") != "session.status" or not isinstance(fields.get("sessionID"), str):
            return
        kind = (fields.get("status") or {}).get("type") if isinstance(fields.get("status"), dict) else fields.get("status")
        with table_lock:
            table = statuses.setdefault(event.get("directory") or home_directory, {})
            if kind == "idle" or not kind:
                table.pop(fields["sessionID"], None)
            else:
                table[fields["sessionID"]] = {"type": kind}

    def note_log(event):
        """2.x: a durable session event is committed to its session's log whether or not a stream
        listens (packages/schema/src/session-event.ts: Event.durable, aggregate sessionID); the
        envelope it gets is the one the live stream sends too. Execution started/ended moves the
        session in or out of the active set (packages/server/src/handlers/session.ts session.active)."""
        fields = event.get("fields") or {}
        sid = fields.get("sessionID")
        if not two or event.get("type") not in DURABLE_SESSION_EVENTS or not isinstance(sid, str):
            return
        with table_lock:
            entries = logs.setdefault(sid, [])
            seq = len(entries) + 1
            event["envelope"] = {"id": "evt_" + secrets.token_hex(12), "created": int(time.time() * 1000),
                                 "durable": {"aggregateID": sid, "seq": seq, "version": 1}}
            entries.append(dict(event["envelope"], type=event["type"], data=fields))
            if event["type"] == "session.execution.started":
                active.add(sid)
            elif event["type"].startswith("session.execution."):
                active.discard(sid)

    def broadcast(event):
        with subscribers_lock:
            for q in subscribers:
                q.put(event)
            return len(subscribers)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "opencode-standin"

        def log_message(self, fmt, *a):
            if not args.quiet:
                sys.stderr.write("standin: " + (fmt % a) + "\n")

        def send_body(self, status, body, content_type="application/json", extra=None):
            data = body.encode() if isinstance(body, str) else body
            self.send_response(status)
            if data or content_type != "application/json":
                self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for key, value in (extra or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def password_matches(self):
            expected = "Basic " + base64.b64encode(f"{args.username}:{args.password}".encode()).decode()
            return self.headers.get("Authorization") == expected

        def authorized(self):
            if args.password is None:
                return True
            if self.password_matches() or self.session_matches():
                return True
            self.refuse(api=True)
            return False

        def cookie_name(self):
            host = self.headers.get("Host", "")
            port = host.rsplit(":", 1)[1] if ":" in host and not host.endswith("]") else ""
            return f"opencode_session_{port}" if port.isdigit() else "opencode_session"

        def session_matches(self):
            """A pairing session: the Basic password, or the cookie when Origin's host:port is Host's."""
            auth = self.headers.get("Authorization", "")
            if auth.startswith("Basic "):
                try:
                    user, _, token = base64.b64decode(auth[6:]).decode().partition(":")
                    if user == args.username and sessions.get(token, 0) > time.time():
                        return True
                except Exception:
                    pass
            origin = self.headers.get("Origin")
            if origin is not None and origin.split("://", 1)[-1].rstrip("/") != self.headers.get("Host"):
                return False
            for part in self.headers.get("Cookie", "").split(";"):
                name, _, value = part.strip().partition("=")
                if name == self.cookie_name() and sessions.get(value, 0) > time.time():
                    return True
            return False

        def do_POST(self):
            path = self.path.split("?")[0]
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            if path == "/standin/emit":
                event = json.loads(body)
                # A JSON array is several events in their order (scripts/notify-bounds.sh's floods).
                events = event if isinstance(event, list) else [event]
                for one in events:
                    note_status(one)
                    note_log(one)
                with subscribers_lock:
                    for q in subscribers:
                        for one in events:
                            q.put(one)
                    count = len(subscribers)
                    peers = [q.peer for q in subscribers]
                return self.send_body(200, compact({"streams": count, "peers": peers}))
            if path in ("/standin/permission", "/standin/question"):
                return self.add_pending(path.rsplit("/", 1)[1], json.loads(body))
            if path == "/standin/status":
                # A session's status changed while no stream listened: the map only, no event.
                spec = json.loads(body)
                note_status({"type": "session.status", "directory": spec.get("directory"),
                             "fields": {"sessionID": spec["sessionID"], "status": {"type": spec["type"]}}})
                return self.send_body(200, compact({}))
            if path == "/standin/forget":
                with table_lock:
                    for table in pending.values():
                        table.clear()
                return self.send_body(200, compact({}))
            if args.flavor != "other" and self.is_reply_route(path):
                if not self.authorized():
                    return
                return self.reply(path, body)
            if not two or path != "/api/pair":
                return self.send_body(404, b"")
            if not self.authorized():
                return
            code = secrets.token_urlsafe(16)
            codes[code] = time.time() + PAIR_SECONDS
            return self.send_body(200, compact({"code": code, "expires_in": PAIR_SECONDS}))

        def connect(self, code):
            browser = "text/html" in self.headers.get("Accept", "")
            if codes.pop(code, 0) <= time.time():
                if browser:
                    return self.send_body(401, "This pairing link expired or was already used. Run `opencode pair` to get a new one.",
                                          "text/plain; charset=utf-8")
                return self.send_body(401, compact({"_tag": "UnauthorizedError", "message": "Pairing link expired or already used"}))
            token = f"{int(time.time()) + SESSION_SECONDS}.{secrets.token_urlsafe(24)}"
            sessions[token] = time.time() + SESSION_SECONDS
            if not browser:
                return self.send_body(200, compact({"token": token}))
            cookie = f"{self.cookie_name()}={token}; Max-Age={SESSION_SECONDS}; Path=/; HttpOnly; SameSite=Lax"
            return self.send_body(302, b"", "text/plain", extra={"Location": "/", "Set-Cookie": cookie})

        def refuse(self, api):
            challenge = {"WWW-Authenticate": 'Basic realm="Secure Area"'}
            if two and api:
                # packages/server/src/middleware/authorization.ts: UnauthorizedError, as JSON.
                self.send_body(401, compact({"_tag": "UnauthorizedError", "message": "Authentication required"}), extra=challenge)
            elif args.hono_401:
                # hono/basic-auth, 1.x's older server.
                self.send_body(401, "Unauthorized", "text/plain; charset=UTF-8", extra=challenge)
            else:
                # 1.x's Effect server (HttpServerResponse.empty), and 2.x's guarded web app.
                self.send_body(401, b"", extra=challenge)

        def do_GET(self):
            path = self.path.split("?")[0]
            if path == "/standin/replies":
                with table_lock:
                    return self.send_body(200, compact({"replies": list(replies)}))
            if args.flavor == "other":
                return self.send_body(200, "<html><body>Welcome to nginx!</body></html>", "text/html")
            if two:
                return self.opencode2(path)
            if not self.authorized():
                return
            if path == "/global/health":
                return self.send_body(200, compact({"healthy": True, "version": version}))
            if path == "/global/event":
                return self.stream_events(global_shape=True)
            if path == "/event":
                return self.stream_events(global_shape=False)
            if path in ("/permission", "/question"):
                return self.send_body(200, compact(self.listed(path[1:], "directory")))
            if path == "/session/status":
                # 1.x: {sessionID: SessionStatus.Info} of the directory's sessions that are not idle.
                with table_lock:
                    return self.send_body(200, compact(dict(statuses.get(self.directory("directory"), {}))))
            if path.startswith("/session/") and path.count("/") == 2:
                # packages/opencode/src/server/routes/session.ts: GET /session/:sessionID -> Session.Info.
                with table_lock:
                    info = session_titles.get(path.rsplit("/", 1)[1])
                if info is None:
                    return self.send_body(404, compact({"name": "NotFoundError", "data": {"message": "session not found"}}))
                return self.send_body(200, compact(info))
            if path.startswith("/bytes/"):
                return self.send_bytes(int(path.split("/")[2]))
            return self.send_body(200, WEB_APP, "text/html")

        def opencode2(self, path):
            if path.startswith("/auth/connect/") and path.count("/") == 3:
                return self.connect(path.rsplit("/", 1)[1])
            routes = {"/api/event", "/bytes", "/api/permission/request", "/api/question/request"}
            routes.add("/api/health" if args.flavor == "opencode2.0.3" else "/api/info")
            route = "/bytes" if path.startswith("/bytes/") else path
            if path == "/api/session/active" or (path.startswith("/api/session/") and path.endswith("/log") and path.count("/") == 4):
                if not self.authorized():
                    return
                return self.session_log(path.split("/")[3]) if path.endswith("/log") else self.active_sessions()
            if path.startswith("/api/session/") and path.count("/") == 3:
                # packages/protocol/src/groups/session.ts: GET /api/session/:sessionID -> {"data": Session.Info}.
                if not self.authorized():
                    return
                ident = path.rsplit("/", 1)[1]
                with table_lock:
                    info = session_titles.get(ident)
                if info is None:
                    return self.send_body(404, compact({"_tag": "SessionNotFoundError", "sessionID": ident,
                                                        "message": f"Session not found: {ident}"}))
                return self.send_body(200, compact({"data": info}))
            if route not in routes:
                # packages/cli/src/services/web-ui.ts: a route the API lacks is the web app,
                # outside the API's password check; /api/... ones an empty 404.
                if args.flavor == "opencode2" and path != "/api" and not path.startswith("/api/"):
                    if args.web_auth and args.password and not self.password_matches():
                        return self.refuse(api=False)
                    return self.send_body(200, WEB_APP, "text/html; charset=utf-8", extra={"Cache-Control": "no-cache"})
                return self.send_body(404, b"")
            if not self.authorized():
                return
            if route == "/api/health":
                return self.send_body(200, compact({"healthy": True, "version": version, "pid": os.getpid()}))
            if route == "/api/info":
                return self.send_body(200, compact({
                    "version": version, "pid": 0 if args.dev_build else os.getpid(), "urls": [f"http://{args.host}:{state['port']}"],
                    "paths": {"tmp": tempfile.gettempdir(), "home": os.path.expanduser("~")}}))
            if route == "/api/event":
                return self.stream_events(global_shape=False)
            if route in ("/api/permission/request", "/api/question/request"):
                directory = self.directory("location[directory]")
                return self.send_body(200, compact({
                    "location": {"directory": directory, "project": {"id": "prj_standin", "worktree": directory}},
                    "data": self.listed(route.split("/")[2], "location[directory]")}))
            return self.send_bytes(int(path.split("/")[2]))

        def active_sessions(self):
            """packages/protocol/src/groups/session.ts session.active: {"data": {sessionID: {"type":
            "running"}}, "watermarks": {sessionID: seq}} (handlers/session.ts: the log position read
            alongside)."""
            with table_lock:
                running = sorted(active)
                return self.send_body(200, compact({"data": {sid: {"type": "running"} for sid in running},
                                                    "watermarks": {sid: len(logs[sid]) for sid in running if logs.get(sid)}}))

        def session_log(self, sid):
            """packages/protocol/src/groups/session.ts session.log: SSE of the durable entries with seq >
            after, then {"type":"log.synced","aggregateID","seq"?}, and the read completes (no follow)."""
            from urllib.parse import parse_qs, urlsplit
            after = (parse_qs(urlsplit(self.path).query).get("after") or ["-1"])[0]
            with table_lock:
                entries = logs.get(sid)
                if entries is None and sid not in session_titles:
                    return self.send_body(404, compact({"_tag": "SessionNotFoundError", "sessionID": sid,
                                                        "message": f"Session not found: {sid}"}))
                entries = list(entries or [])
            try:
                after = int(after)
            except ValueError:
                return self.send_body(400, compact({"_tag": "InvalidRequestError", "message": "after: expected an integer"}))
            synced = {"type": "log.synced", "aggregateID": sid}
            if entries:
                synced["seq"] = entries[-1]["durable"]["seq"]
            body = "".join("data: " + compact(e) + "\n\n" for e in entries if e["durable"]["seq"] > after)
            body += "data: " + compact(synced) + "\n\n"
            return self.send_body(200, body, "text/event-stream", extra={"Cache-Control": "no-cache"})

        def directory(self, query_name):
            """The project directory a request names: the query, else x-opencode-directory, else the server's."""
            from urllib.parse import parse_qs, unquote, urlsplit
            query = parse_qs(urlsplit(self.path).query)
            raw = (query.get(query_name) or [None])[0] or self.headers.get("x-opencode-directory")
            return unquote(raw) if raw else home_directory

        def listed(self, kind, query_name):
            with table_lock:
                return list(pending[kind].get(self.directory(query_name), {}).values())

        def add_pending(self, kind, spec):
            directory = spec.get("directory", home_directory)
            if "title" in spec:
                with table_lock:
                    session_titles[spec["sessionID"]] = {"id": spec["sessionID"], "title": spec["title"], "directory": directory}
            ident = spec.get("id") or ascending("per" if kind == "permission" else "que")
            if kind == "question":
                request = {"id": ident, "sessionID": spec["sessionID"], "questions": spec.get("questions", [])}
            elif two:
                request = {"id": ident, "sessionID": spec["sessionID"], "action": spec.get("permission", "bash"),
                           "resources": spec.get("patterns", []), "save": spec.get("always", []),
                           "metadata": spec.get("metadata", {})}
            else:
                request = {"id": ident, "sessionID": spec["sessionID"], "permission": spec.get("permission", "bash"),
                           "patterns": spec.get("patterns", []), "metadata": spec.get("metadata", {}),
                           "always": spec.get("always", [])}
            with table_lock:
                pending[kind].setdefault(directory, {})[ident] = request
            streams = 0
            if spec.get("emit", True):
                streams = broadcast({"type": f"{kind}.asked", "fields": dict(request), "directory": directory})
            return self.send_body(200, compact({"id": ident, "streams": streams}))

        def is_reply_route(self, path):
            parts = path.strip("/").split("/")
            if two:
                return len(parts) == 6 and parts[:2] == ["api", "session"] and (
                    (parts[3] == "permission" and parts[5] == "reply") or (parts[3] == "question" and parts[5] in ("reply", "reject")))
            question = len(parts) == 3 and parts[0] == "question" and parts[2] in ("reply", "reject")
            new = len(parts) == 3 and parts[0] == "permission" and parts[2] == "reply" and not args.old_permission_reply
            old = len(parts) == 4 and parts[0] == "session" and parts[2] == "permissions"
            return question or new or old

        def question_reply(self, parts, body):
            """A question's reply or reject, judged as the flavour's source does: 1.x answers true
            whether or not it was pending; 2.x 204, or 404 QuestionNotFoundError for a question not
            pending or of another session. A reply's body must be {"answers": [[label, ...], ...]}."""
            verb = parts[-1]
            ident = parts[4] if two else parts[1]
            session = parts[2] if two else None
            try:
                answer = json.loads(body) if body else {}
            except ValueError:
                answer = None
            answers = answer.get("answers") if isinstance(answer, dict) else None
            valid = isinstance(answers, list) and all(isinstance(one, list) and all(isinstance(label, str) for label in one) for one in answers)
            if verb == "reply" and not valid:
                return 400, (compact({"_tag": "InvalidRequestError", "message": "bad answers"}) if two else "bad answers")
            found = take_pending("question", ident, session)
            if found is not None:
                fields = {"sessionID": found["sessionID"], "requestID": ident}
                if verb == "reply":
                    fields["answers"] = answers
                broadcast({"type": "question.replied" if verb == "reply" else "question.rejected", "fields": fields})
            if found is not None or not two:
                return (204, b"") if two else (200, "true")
            return 404, compact({"_tag": "QuestionNotFoundError", "requestID": ident, "message": f"Question request not found: {ident}"})

        def reply(self, path, body):
            """A reply to a pending permission or question, judged as the flavour's source does; every one recorded."""
            parts = path.strip("/").split("/")
            if parts[0] == "question" or (two and parts[3] == "question"):
                status, out = self.question_reply(parts, body)
                return self.recorded(path, body, status, out)
            try:
                answer = json.loads(body or b"{}")
            except ValueError:
                answer = None
            field = "response" if parts[0] == "session" else "reply"
            ident = parts[4] if two else (parts[3] if parts[0] == "session" else parts[1])
            session = parts[2] if two else (parts[1] if parts[0] == "session" else None)
            if not isinstance(answer, dict) or answer.get(field) not in ("once", "always", "reject"):
                status, out = 400, compact({"_tag": "InvalidRequestError", "message": "bad reply"}) if two else "bad reply"
            else:
                found = take_pending("permission", ident, session)
                if found is not None or not two:
                    # 1.x answers true whether or not the request was still pending.
                    status, out = (204, b"") if two else (200, "true")
                else:
                    status, out = 404, compact({"_tag": "PermissionNotFoundError", "requestID": ident,
                                                "message": f"Permission request not found: {ident}"})
                if found is not None:
                    broadcast({"type": "permission.replied", "fields": {"sessionID": found["sessionID"], "requestID": ident,
                                                                        "reply": answer[field]}})
            return self.recorded(path, body, status, out)

        def recorded(self, path, body, status, out):
            """Keeps a reply received (GET /standin/replies) and answers it."""
            with table_lock:
                replies.append({"method": "POST", "path": path, "body": body.decode("utf-8", "replace"), "status": status})
            if status == 204:
                self.send_response(204)
                self.end_headers()
                return
            return self.send_body(status, out)

        def send_bytes(self, count):
            chunk = bytes(range(256)) * 256
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(count))
            self.end_headers()
            left = count
            while left > 0:
                piece = chunk[: min(left, len(chunk))]
                self.wfile.write(piece)
                left -= len(piece)

        def stream_events(self, global_shape):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            if two:
                # packages/server/src/handlers/event.ts: these headers, a chunked body (Node).
                self.send_header("Cache-Control", "no-cache, no-transform")
                self.send_header("X-Accel-Buffering", "no")
                self.send_header("X-Content-Type-Options", "nosniff")
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            self.chunked = two
            mine = queue.Queue()
            mine.peer = f"{self.client_address[0]}:{self.client_address[1]}"
            with subscribers_lock:
                subscribers.append(mine)
            try:
                if two:
                    if args.heartbeat_first:
                        self.write(": heartbeat\n\n")
                    self.event({"id": "evt_" + secrets.token_hex(12), "type": "server.connected", "data": {}})
                elif args.flavor != "nosse":
                    self.event(self.shape("server.connected", global_shape))
                beat_at = time.monotonic() + heartbeat
                while True:
                    try:
                        sent = mine.get(timeout=0.1)
                    except queue.Empty:
                        # A client that has gone stops counting at once (POST /standin/emit says how many listen).
                        readable, _, _ = select.select([self.connection], [], [], 0)
                        if readable and not self.connection.recv(1, socket.MSG_PEEK):
                            return
                        if time.monotonic() < beat_at:
                            continue
                        beat_at = time.monotonic() + heartbeat
                        if two:
                            self.write(": heartbeat\n\n")
                        else:
                            self.event(self.shape("server.heartbeat", global_shape))
                        continue
                    ident = "evt_" + secrets.token_hex(12)
                    if two:
                        # A durable event carries its log envelope (id, created, durable {aggregateID, seq, version}).
                        self.event(dict({"id": ident}, **sent.get("envelope", {}), type=sent["type"], data=sent.get("fields", {})))
                    elif global_shape:
                        self.event({"directory": sent.get("directory", "/home/me/project"),
                                    "payload": {"id": ident, "type": sent["type"], "properties": sent.get("fields", {})}})
                    else:
                        self.event({"id": ident, "type": sent["type"], "properties": sent.get("fields", {})})
            except (BrokenPipeError, ConnectionResetError):
                return
            finally:
                with subscribers_lock:
                    subscribers.remove(mine)

        @staticmethod
        def shape(kind, global_shape):
            return {"payload": {"type": kind, "properties": {}}} if global_shape else {"type": kind, "properties": {}}

        def event(self, obj):
            self.write("data: " + compact(obj) + "\n\n")

        def write(self, text):
            data = text.encode()
            if getattr(self, "chunked", False):
                data = b"%x\r\n" % len(data) + data + b"\r\n"
            self.wfile.write(data)
            self.wfile.flush()

    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    state["port"] = server.server_address[1]
    registration = register_service(args, version, state["port"]) if args.service else None
    print(f"LISTENING {server.server_address[1]}", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        if registration:
            unregister_service(*registration)


def service_file_name(channel):
    """service-config.ts's filename()."""
    if channel in ("latest", "dev", "beta", "next"):
        return "service.json"
    return "service-" + "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "-" for c in channel) + ".json"


def write_private(path, text):
    """As the service writes its files: a temporary file, 0600, renamed into place."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.rename(temp, path)


def register_service(args, version, port):
    """service-registration.ts: {id, version, url, pid, password} in the state directory."""
    home = os.path.expanduser("~")
    state_dir = os.path.join(os.environ.get("XDG_STATE_HOME") or os.path.join(home, ".local", "state"), "opencode")
    config_dir = os.environ.get("OPENCODE_CONFIG_DIR") or os.path.join(
        os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config"), "opencode")
    name = service_file_name(args.service)
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(args.host, args.host)
    url = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
    info = {"id": secrets.token_hex(8), "version": version, "url": url, "pid": os.getpid()}
    if args.password:
        info["password"] = args.password
    text = json.dumps(info, separators=(",", ":"))
    path = os.path.join(state_dir, name)
    write_private(path, text)
    if not args.no_settings and args.password:
        write_private(os.path.join(config_dir, name), json.dumps({"password": args.password}, indent=2) + "\n")
    return path, text


def unregister_service(path, text):
    try:
        with open(path) as f:
            if f.read() == text:
                os.unlink(path)
    except OSError:
        pass


if __name__ == "__main__":
    main()
