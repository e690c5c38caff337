#!/usr/bin/env python3
"""Times issue 54's two push goals against a running `home up --push`, from outside it.

usage: push-probe.py SERVER_PORT PHONE_PORT TOPIC STANDIN_PORT SAMPLES GAP_S

SERVER_PORT: ntfy itself (the probe reads the push topic's JSON stream there, on the VPS: the
moment a message is stored). PHONE_PORT: the phone's route to the same ntfy (a delayed relay):
each button is performed through it as ntfy's app does (the action's method, URL, headers and
body), the URL's host:port swapped for the phone's route. STANDIN_PORT: the OpenCode stand-in
`home up` follows (on the home side). Each sample asks a permission on the stand-in (its
permission.asked event goes to home up), waits for its push on the server (asked -> on ntfy),
taps "Allow once" through the phone's route and polls the stand-in's replies every 2 ms until
the answer is there (tap -> OpenCode). GAP_S seconds between samples (the notifier's burst
budget lets 8 a kind through at once, then one every 4 s). Prints "asked MS" and "tap MS" lines, one
pair a sample; "pushes N" at the end (messages with buttons seen: one per sample expected).
"""
import json
import queue
import sys
import threading
import time
import urllib.parse
import urllib.request


def now_ms():
    return time.monotonic() * 1000


def follow(server_port, topic, seen):
    """Reads the topic's stream on the server; puts (arrival ms, message) for each message."""
    with urllib.request.urlopen(f"http://127.0.0.1:{server_port}/{topic}/json", timeout=300) as stream:
        for line in stream:
            at = now_ms()
            event = json.loads(line)
            if event.get("event") == "message":
                seen.put((at, event))
            elif event.get("event") == "open":
                seen.put((at, None))


def post_json(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)


def replies(standin):
    with urllib.request.urlopen(f"http://127.0.0.1:{standin}/standin/replies", timeout=10) as answer:
        return len(json.load(answer)["replies"])


def tap(action, phone_port):
    """Performs an http action as ntfy's app does, through the phone's route to the server."""
    parts = urllib.parse.urlsplit(action["url"])
    url = urllib.parse.urlunsplit((parts.scheme, f"127.0.0.1:{phone_port}", parts.path, parts.query, ""))
    request = urllib.request.Request(url, data=(action.get("body") or "").encode(), method=action.get("method") or "POST",
                                     headers=action.get("headers") or {})
    with urllib.request.urlopen(request, timeout=10) as answer:
        answer.read()
        return answer.status


def main():
    server_port, phone_port, topic, standin, samples, gap = sys.argv[1:7]
    samples, gap = int(samples), float(gap)
    seen = queue.Queue()
    threading.Thread(target=follow, args=(server_port, topic, seen), daemon=True).start()
    seen.get(timeout=10)  # the stream is open
    pushes = 0
    for index in range(samples):
        before = replies(standin)
        asked = now_ms()
        post_json(f"http://127.0.0.1:{standin}/standin/permission",
                  {"sessionID": f"ses_bench{index}", "permission": "bash", "patterns": ["make"]})
        while True:
            at, message = seen.get(timeout=20)
            if message and message.get("actions"):
                pushes += 1
                break
        print(f"asked {at - asked:.0f}", flush=True)
        tapped = now_ms()
        status = tap(message["actions"][0], phone_port)
        while replies(standin) == before:
            if now_ms() - tapped > 20000:
                sys.exit(f"no answer at OpenCode 20 s after the tap (ntfy answered {status})")
            time.sleep(0.002)
        print(f"tap {now_ms() - tapped:.0f}", flush=True)
        time.sleep(gap)
    time.sleep(1)
    while not seen.empty():
        _, message = seen.get()
        pushes += 1 if message and message.get("actions") else 0
    print(f"pushes {pushes}", flush=True)


if __name__ == "__main__":
    main()
