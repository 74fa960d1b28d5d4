#!/usr/bin/env bash
# apt-get install PKG... as the tests' setup does it (as root): waits for the package lock held by
# another apt or dpkg (an unattended upgrade, a parallel test) instead of failing on it, refreshes
# the package lists first (tolerating a failed refresh: the cached lists may do), and keeps the
# daemons a package would start from starting (the tests start what they need themselves).
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: apt-install.sh PKG..." >&2; exit 2; }
export DEBIAN_FRONTEND=noninteractive
# dpkg's frontend lock and apt's lists lock: wait up to 10 minutes for each
lock=(-o DPkg::Lock::Timeout=600)
for attempt in 1 2 3; do
  apt-get "${lock[@]}" update -q >/dev/null && break
  sleep $((attempt * 5))
done
own_policy=0
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; own_policy=1
fi
trap '[ $own_policy = 1 ] && rm -f /usr/sbin/policy-rc.d' EXIT
apt-get "${lock[@]}" install -y -q --no-install-recommends "$@" >/dev/null
