#!/usr/bin/env bash
# The client command the MCP conformance suite launches for every client
# scenario: `bash experiments/conformance/client.sh URL`. It is
# `mcp-witness connect --call-tools` and nothing more; this script only
# turns what the suite hands a client into mcp-witness's documented flags:
#
# - the server URL, the suite's last argument, goes to --url;
# - when MCP_CONFORMANCE_CONTEXT carries a pre-registered client (a
#   client_id, alone for a public client, or with a client_secret or a
#   private_key_pem), they become
#   --oauth-client-id and --oauth-client-secret-env or
#   --oauth-client-key-env (the secret or key passes through the
#   environment, never the command line); an ID token from an identity
#   provider (idp_id_token, idp_token_endpoint, idp_client_id) adds
#   --oauth-id-token-env and --oauth-idp-* for the identity-assertion flow;
# - otherwise the client offers a client ID metadata document URL, which
#   it uses where the authorization server says it accepts them, and
#   registers dynamically (RFC 7591) where it does not. The URL is the one
#   the suite's authorization servers recognise; it need not resolve;
# - --oauth-flow auto takes the flow the authorization server's metadata
#   offers (the authorization code, else client credentials with a secret);
# - when the context names the arguments of tool calls (toolCalls: a list
#   of {name, arguments}), they go to --arguments, in a file of their own.
#
# - one scenario hands its instruction in no context:
#   json-schema-2020-12-preservation asks, in its description, for the
#   inputSchema the client holds for json_schema_2020_12_tool to be passed
#   back verbatim as json_schema_echo's `schema` argument. For it alone
#   (MCP_CONFORMANCE_SCENARIO) --arguments says so with a `$served`
#   reference, so what is echoed is what the client kept of the catalog.
#
# The OAuth flags only come into play if the server answers 401: a scenario
# without authorization sees a plain client. No other scenario name is read.
# MCP_WITNESS names the binary (default: target/debug/mcp-witness).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${MCP_WITNESS:-$here/../../target/debug/mcp-witness}"
if [ "$#" -ne 1 ]; then
    echo "usage: MCP_CONFORMANCE_CONTEXT=... bash $0 URL" >&2
    exit 2
fi
url="$1"
auth=(--oauth-client-id https://conformance-test.local/client-metadata.json --oauth-register)
if [ -n "${MCP_CONFORMANCE_CONTEXT:-}" ]; then
    # client_id on the first line, then "secret" or "key" (or nothing);
    # the credential itself goes straight into the environment.
    mapfile -t given < <(python3 -c '
import json, os
context = json.loads(os.environ["MCP_CONFORMANCE_CONTEXT"])
print(context.get("client_id") or "")
print("secret" if context.get("client_secret") else "key" if context.get("private_key_pem") else "")
')
    case "${given[1]:-}" in
        secret)
            MCP_WITNESS_CONFORMANCE_SECRET="$(python3 -c 'import json, os; print(json.loads(os.environ["MCP_CONFORMANCE_CONTEXT"])["client_secret"])')"
            export MCP_WITNESS_CONFORMANCE_SECRET
            auth=(--oauth-client-id "${given[0]}" --oauth-client-secret-env MCP_WITNESS_CONFORMANCE_SECRET)
            ;;
        key)
            MCP_WITNESS_CONFORMANCE_KEY="$(python3 -c 'import json, os; print(json.loads(os.environ["MCP_CONFORMANCE_CONTEXT"])["private_key_pem"])')"
            export MCP_WITNESS_CONFORMANCE_KEY
            auth=(--oauth-client-id "${given[0]}" --oauth-client-key-env MCP_WITNESS_CONFORMANCE_KEY)
            ;;
        *)
            # A pre-registered public client: its id alone.
            if [ -n "${given[0]:-}" ]; then
                auth=(--oauth-client-id "${given[0]}")
            fi
            ;;
    esac
    mapfile -t idp < <(python3 -c '
import json, os
context = json.loads(os.environ["MCP_CONFORMANCE_CONTEXT"])
if context.get("idp_id_token"):
    print(context.get("idp_token_endpoint") or "")
    print(context.get("idp_client_id") or "")
')
    if [ "${#idp[@]}" -eq 2 ]; then
        MCP_WITNESS_CONFORMANCE_ID_TOKEN="$(python3 -c 'import json, os; print(json.loads(os.environ["MCP_CONFORMANCE_CONTEXT"])["idp_id_token"])')"
        export MCP_WITNESS_CONFORMANCE_ID_TOKEN
        auth+=(--oauth-id-token-env MCP_WITNESS_CONFORMANCE_ID_TOKEN
            --oauth-idp-token-endpoint "${idp[0]}" --oauth-idp-client-id "${idp[1]}")
    fi
fi
if [ -n "${MCP_CONFORMANCE_CONTEXT:-}" ]; then
    workload="$(python3 -c 'import json, os; print(json.loads(os.environ["MCP_CONFORMANCE_CONTEXT"]).get("valid_jwt") or "")')"
    if [ -n "$workload" ]; then
        MCP_WITNESS_CONFORMANCE_WORKLOAD_TOKEN="$workload"
        export MCP_WITNESS_CONFORMANCE_WORKLOAD_TOKEN
        auth+=(--oauth-workload-token-env MCP_WITNESS_CONFORMANCE_WORKLOAD_TOKEN)
    fi
fi
calls=()
arguments="$(mktemp)"
trap 'rm -f "$arguments"' EXIT
if [ "${MCP_CONFORMANCE_SCENARIO:-}" = json-schema-2020-12-preservation ]; then
    cat >"$arguments" <<'JSON'
{"json_schema_echo": {"schema": {"$served": {"tool": "json_schema_2020_12_tool", "pointer": "/inputSchema"}}}}
JSON
    calls=(--arguments "$arguments")
elif [ -n "${MCP_CONFORMANCE_CONTEXT:-}" ]; then
    if python3 -c '
import json, os, sys
context = json.loads(os.environ["MCP_CONFORMANCE_CONTEXT"])
calls = context.get("toolCalls")
if not isinstance(calls, list):
    sys.exit(1)
json.dump(calls, open(sys.argv[1], "w"))
' "$arguments"; then
        calls=(--arguments "$arguments")
    fi
fi
"$bin" connect --call-tools --include-destructive --oauth-flow auto "${auth[@]}" ${calls[@]+"${calls[@]}"} --url "$url"
