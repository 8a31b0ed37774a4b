"""Drives a skillbox host with the public A2E Python SDK's own client.

The SDK (github.com/a2eprotocol/python-sdk) is not installable here: PyPI is
unreachable and its package pulls in fastmcp, mcp and fastapi. Its HTTP+SSE
client needs only `requests` and pydantic, so this driver loads the SDK's own
modules from a checkout, unmodified, skipping only the package's
`__init__` (which imports the SDK's server, hence fastapi).

Usage: python3 drive.py SDK_CHECKOUT BASE_URL SESSIONS CALLS
Prints one JSON line: calls ok and failed, what code mode answered.
"""
import json
import logging
import sys
import threading
import types

sdk, base, sessions, calls = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
package = types.ModuleType("a2e")
package.__path__ = [sdk + "/a2e"]
sys.modules["a2e"] = package
sys.path.insert(0, sdk)

from a2e.core.transports.http import HTTPTransport  # noqa: E402
from a2e.core.client.client import A2EClient  # noqa: E402
from a2e.caps.tools.client import ToolAPI  # noqa: E402

logging.basicConfig(level=logging.ERROR)
log = logging.getLogger("drive")
results = {"ok": 0, "failed": 0, "errors": []}
lock = threading.Lock()


def session(i):
    transport = HTTPTransport(base_url=base + "/a2e", logger=log)
    client = A2EClient(transport, log, auth_token="")
    try:
        client.connect()
        tools = ToolAPI(client)
        for n in range(calls):
            r = tools.call("inc", {"n": n}, timeout=60)
            good = r.success and r.data == {"n": n + 1}
            with lock:
                results["ok" if good else "failed"] += 1
                if not good:
                    results["errors"].append(repr(r)[:300])
    except Exception as e:
        with lock:
            results["failed"] += 1
            results["errors"].append(f"{i}: {type(e).__name__}: {e}"[:300])
    finally:
        client.disconnect()


threads = [threading.Thread(target=session, args=(i,)) for i in range(sessions)]
for t in threads:
    t.start()
for t in threads:
    t.join()

# Code mode through the same client.
transport = HTTPTransport(base_url=base + "/a2e", logger=log)
client = A2EClient(transport, log, auth_token="")
client.connect()
tools = ToolAPI(client)
api = tools.call("code_api", {"query": "adds one"}, timeout=60)
chain = tools.call("run_code", {
    "code": "let x = { n: 0 };\nfor (let i = 0; i < 20; i++) x = await tools.inc(x);\nconsole.log('done');\nx.n",
}, timeout=60)
nested = tools.call("run_code", {"code": "await tools.run_code({ code: '1' })"}, timeout=60)
client.disconnect()
results["code_api_declares_inc"] = bool(api.success and "inc: (args" in api.data["declarations"])
results["code_api_declares_run_code"] = bool(api.success and "run_code:" in api.data["declarations"])
results["run_code_value"] = chain.data["value"] if chain.success else None
results["run_code_calls"] = len(chain.data["calls"]) if chain.success else None
results["run_code_console"] = [line["text"] for line in chain.data["console"]] if chain.success else None
results["nested_error"] = nested.data.get("error") if nested.success and nested.data else repr(nested)[:300]
print(json.dumps(results))
