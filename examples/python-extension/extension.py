"""acme/words: an insitu extension in standard-library Python (protocol v1 over stdio).

transform word_count  a Markdown table of the words in each file matching `pattern`
resource  word_totals [{"path": ..., "words": n}, ...] for `pattern`
renderer  word_list   "- <path>: <n> words" lines from such a value
validator no_todo     a warning for each Markdown file that still says TODO
"""
import json
import sys
import threading

stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
write_lock = threading.Lock()
pending = {}  # id of our host.resource.get request -> [event, response]
pending_lock = threading.Lock()
next_id = [0]


def log(text):
    print(text, file=sys.stderr, flush=True)  # stderr is the log (the host prefixes [acme/words]); stdout is protocol only


def send(message):
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    with write_lock:
        stdout.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        stdout.flush()


def read_message():
    length = None
    while True:
        line = stdin.readline()
        if not line:
            return None  # end of input: the host is gone
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    return json.loads(stdin.read(length))


def read(resource, request):
    """host.resource.get: read through the host (permission-checked, dependencies recorded)."""
    with pending_lock:
        next_id[0] += 1
        request_id = next_id[0]
        waiting = pending[request_id] = [threading.Event(), None]
    send({"jsonrpc": "2.0", "id": request_id, "method": "host.resource.get",
          "params": {"resource": resource, "location": request["location"], "trace": request["trace"]}})
    waiting[0].wait()
    response = waiting[1]
    if "error" in response:
        raise RuntimeError(response["error"]["message"])
    return response["result"]["value"]


def totals(request):
    pattern = request["options"].get("pattern", "**/*.md")
    paths = read(f"fs:glob:{pattern}", request)
    return [{"path": path, "words": len(read(f"fs:file:{path}", request).split())} for path in paths]


def word_count(request):
    rows = [f"| {row['path']} | {row['words']} |" for row in totals(request)]
    return {"content": "\n".join(["| File | Words |", "| --- | --- |", *rows])}


def word_totals(request):
    return {"value": totals(request)}


def word_list(request):
    return {"content": "\n".join(f"- {row['path']}: {row['words']} words" for row in request["value"])}


def no_todo(request):
    diagnostics = []
    for path in read("fs:glob:**/*.md", request):
        for number, line in enumerate(read(f"fs:file:{path}", request).splitlines(), start=1):
            if "TODO" in line:
                diagnostics.append({"severity": "warning", "message": "still says TODO",
                                    "path": path, "line": number, "code": "no-todo"})
    return {"diagnostics": diagnostics}


CAPABILITIES = {
    "insitu.transform": {"word_count": word_count},
    "insitu.resource": {"word_totals": word_totals},
    "insitu.render": {"word_list": word_list},
    "insitu.validate": {"no_todo": no_todo},
}


def initialize(params):
    log(f"initialize for {params['root']}")
    return {"name": "acme/words", "version": "1.0.0", "protocol": 1, "capabilities": {
        "transform": {"word_count": {"params": {"type": "object"}}},
        "resource": {"word_totals": {"params": {"type": "object"}}},
        "renderer": {"word_list": {"params": {"type": "object"}, "value": {"type": "array"}}},
        "validator": {"no_todo": {"params": {"type": "object"}}},
    }}


def handle(message):
    method, params = message["method"], message.get("params")
    try:
        if method == "insitu.initialize":
            result = initialize(params)
        elif method in CAPABILITIES and params["name"] in CAPABILITIES[method]:
            result = {"content": None, "value": None, "diagnostics": [], "dependencies": []}
            result.update(CAPABILITIES[method][params["name"]](params))
        else:
            raise LookupError(method)
    except LookupError:
        error = {"code": -32601, "message": f"unknown method: {method}"}
        return send({"jsonrpc": "2.0", "id": message["id"], "error": error})
    except Exception as failure:  # the host shows this message in the document's error
        return send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32000, "message": str(failure)}})
    send({"jsonrpc": "2.0", "id": message["id"], "result": result})


def main():
    while (message := read_message()) is not None:
        if message.get("method") == "insitu.shutdown":
            return send({"jsonrpc": "2.0", "id": message["id"], "result": None})  # then exit
        if "method" in message:  # a request from the host: answer it on its own thread
            threading.Thread(target=handle, args=(message,), daemon=True).start()
        else:  # the answer to one of our host.resource.get requests
            with pending_lock:
                waiting = pending.pop(message["id"])
            waiting[1] = message
            waiting[0].set()


main()
