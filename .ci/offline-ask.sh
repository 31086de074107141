#!/usr/bin/env bash
# Offline proof: build the demo index into a throwaway SCIM_EDGE_HOME, then run one
# `scim-edge ask` inside a network namespace that has no interfaces but a downed
# loopback (`unshare -n`, or `unshare -rn` without root). Nothing below the Python
# socket layer can reach the network there either. Prints SKIPPED and exits 0 where
# namespaces are not allowed.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}

home=$(mktemp -d "${TMPDIR:-/tmp}/scim-edge-offline.XXXXXX")
trap 'rm -rf "$home"' EXIT
export SCIM_EDGE_HOME="$home"

if unshare -n true 2>/dev/null; then
  NS=(unshare -n)
elif unshare -rn true 2>/dev/null; then
  NS=(unshare -rn)
else
  echo "offline ask: SKIPPED: cannot create a network namespace here (unshare -n / -rn refused)"
  exit 0
fi

# Built outside the namespace: index building is not the claim under test.
demo=$("$PY" -c 'from scim_edge.demo import demo_dump_path; print(demo_dump_path())')
"$PY" -m scim_edge build-index "$demo" --name demo >/dev/null

# 1. The namespace really has no network: connecting anywhere fails at once.
"${NS[@]}" "$PY" - <<'PYEOF'
import errno, socket
for host in ("192.0.2.1", "1.1.1.1"):
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect((host, 53))
    except OSError as e:
        assert e.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH), e
    else:
        raise SystemExit(f"connected to {host}: the namespace has network")
    finally:
        s.close()
print("no network in the namespace: ok")
PYEOF

# 2. One question, as a user types it, inside the namespace.
question="Who invented the movable-type printing press in Europe?"
echo "\$ ${NS[*]} scim-edge ask \"$question\" --index demo"
"${NS[@]}" "$PY" -m scim_edge ask "$question" --index demo | tee "$home/ask.out"
grep -q "Printing press" "$home/ask.out"
echo "offline ask: ok (${NS[*]})"
