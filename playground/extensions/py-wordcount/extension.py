#!/usr/bin/env python3
"""playground/py-wordcount 0.1.0: an insitu extension in plain Python (standard library only).

transform `wordcount` {pattern}: lists the files of `fs:glob:<pattern>`, reads each through
`fs:file:<path>` and returns a Markdown table of their titles and word counts (front matter
excluded), with a total. Every read goes through the host (`host.resource.get`), so the host
knows the glob and each file are dependencies, and checks them against the manifest's
permissions.

The protocol (SPEC §1-§3): Content-Length framed JSON-RPC 2.0 on stdin/stdout. stdout carries
frames only; logs go to stderr. Each request is handled in its own thread, so a handler can
wait for the host's answer to its own `host.resource.get` while the reader keeps reading.
"""
import json
import re
import sys
import threading

NAME, VERSION = "playground/py-wordcount", "0.1.0"
PATTERN_SCHEMA = {"type": "object", "required": ["pattern"], "properties": {"pattern": {"type": "string"}}}

stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
write_lock, pending_lock = threading.Lock(), threading.Lock()
pending = {}  # id of our own request -> (event, slot)
next_id = [1]


def log(message):
    sys.stderr.write(f"{message}\n")
    sys.stderr.flush()


def read_frame():
    """One frame's JSON body, or None at a clean end of stream."""
    length = None
    while True:
        line = stdin.readline()
        if not line:
            if length is None:
                return None
            raise EOFError("stream ended inside a frame header")
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    body = stdin.read(length)
    if len(body) < length:
        raise EOFError("stream ended inside a frame body")
    return json.loads(body)


def send(message):
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    with write_lock:
        stdout.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        stdout.flush()


def host_resource(identifier, request):
    """`host.resource.get` on behalf of one invocation; returns the resource's value."""
    event, slot = threading.Event(), {}
    with pending_lock:
        request_id = next_id[0]
        next_id[0] += 1
        pending[request_id] = (event, slot)
    params = {"resource": identifier, "location": request["location"], "trace": request.get("trace", [])}
    send({"jsonrpc": "2.0", "id": request_id, "method": "host.resource.get", "params": params})
    event.wait()
    reply = slot["reply"]
    if "error" in reply:
        raise RuntimeError(reply["error"]["message"])
    return reply["result"]["value"]


def wordcount(request):
    rows = []
    for path in host_resource("fs:glob:" + request["options"]["pattern"], request):
        text = host_resource("fs:file:" + path, request)
        front, body = split_front_matter(text)
        title = re.search(r"^title:\s*(.+?)\s*$", front, re.MULTILINE)
        rows.append((title.group(1).strip("\"'") if title else path, len(re.findall(r"[\w'-]+", body))))
    lines = ["| Task | Words |", "| --- | ---: |"]
    lines += [f"| {title} | {words} |" for title, words in rows]
    lines.append(f"| **{len(rows)} files** | **{sum(words for _, words in rows)}** |")
    return "\n".join(lines)


def split_front_matter(text):
    if text.startswith("---\n"):
        end = re.search(r"^---\s*$", text[4:], re.MULTILINE)
        if end:
            return text[4 : 4 + end.start()], text[4 + end.end() :]
    return "", text


class UnknownMethod(Exception):
    pass


def handle(method, params):
    if method == "insitu.initialize":
        log(f"serving {params['root']}")
        return {
            "name": NAME,
            "version": VERSION,
            "protocol": 1,
            "capabilities": {"resource": {}, "transform": {"wordcount": {"params": PATTERN_SCHEMA}}, "renderer": {}, "validator": {}},
        }
    if method == "insitu.transform":
        if params["name"] != "wordcount":
            raise ValueError(f"unknown transform: {params['name']}")
        return {"content": wordcount(params), "value": None, "diagnostics": [], "dependencies": []}
    if method == "insitu.shutdown":
        return None
    raise UnknownMethod(f"unknown method: {method}")


def answer(message):
    """Run one request (or notification) and send its reply."""
    try:
        reply = {"result": handle(message["method"], message.get("params"))}
    except UnknownMethod as error:
        reply = {"error": {"code": -32601, "message": str(error)}}
    except Exception as error:  # a handler failure: the host reports it on the region
        reply = {"error": {"code": -32000, "message": str(error)}}
    if message.get("id") is not None:
        send({"jsonrpc": "2.0", "id": message["id"], **reply})


def main():
    while True:
        message = read_frame()
        if message is None:
            return  # stdin closed: the host is gone
        if "method" not in message:
            with pending_lock:
                entry = pending.pop(message.get("id"), None)
            if entry:
                entry[1]["reply"] = message
                entry[0].set()
        elif message["method"] == "insitu.shutdown":
            answer(message)
            return
        else:
            threading.Thread(target=answer, args=(message,), daemon=True).start()


if __name__ == "__main__":
    main()
