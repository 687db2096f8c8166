#!/usr/bin/env bash
# Install conteur as a service on a bare Debian 12 / Raspberry Pi OS (bookworm) machine.
# Run it from a checkout of the project, as root, while the machine has internet
# (or with --wheels, see below):
#
#   sudo deploy/install.sh
#
# What it does: installs the system packages (Python, NetworkManager for the hotspot,
# avahi so phones can also reach NAME.local), creates the system user `conteur`, puts the
# project in a virtualenv at /opt/conteur/venv, links /usr/local/bin/conteur, copies
# deploy/ to /opt/conteur/deploy, installs and starts the systemd unit.
# Running it again upgrades in place; the database in /var/lib/conteur is never touched.
#
# Options: --no-apt         skip apt-get (packages already there)
#          --no-start       install the unit but do not enable or start it
#          --wheels DIR     install offline from wheels made beforehand with
#                           `pip wheel --wheel-dir DIR . cryptography` on a connected machine
set -euo pipefail

PREFIX=/opt/conteur
VENV="$PREFIX/venv"
UNIT=/etc/systemd/system/conteur.service
APT=yes
START=yes
WHEELS=""

die() {
    echo "install: $*" >&2
    exit 1
}

while [[ $# -gt 0 ]]; do
    case $1 in
        --no-apt) APT=no; shift ;;
        --no-start) START=no; shift ;;
        --wheels) WHEELS=${2:?--wheels needs a directory}; shift 2 ;;
        -h|--help) sed -n '2,19s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) die "unknown argument $1 (see --help)" ;;
    esac
done

[[ $EUID -eq 0 ]] || die "run me as root: sudo $0"
SOURCE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ -f "$SOURCE/pyproject.toml" ]] || die "run me from a checkout of conteur (no pyproject.toml in $SOURCE)"

if [[ $APT == yes ]]; then
    echo "== system packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    # dnsmasq-base: NetworkManager's shared mode runs it to give phones addresses.
    apt-get install -y --no-install-recommends \
        python3 python3-venv python3-pip sqlite3 \
        network-manager dnsmasq-base avahi-daemon
fi

python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || die "conteur needs Python 3.11 or newer (Debian 12 / Raspberry Pi OS bookworm); found $(python3 --version)"

echo "== user conteur"
if ! id -u conteur >/dev/null 2>&1; then
    useradd --system --user-group --home-dir /var/lib/conteur --no-create-home \
        --shell /usr/sbin/nologin --comment "conteur LARP server" conteur
fi

echo "== virtualenv $VENV"
mkdir -p "$PREFIX"
[[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
# cryptography is what `conteur serve --tls` makes its certificate with.
if [[ -n "$WHEELS" ]]; then
    # By name: the wheel of conteur itself is in DIR, so nothing needs building offline.
    "$VENV/bin/pip" install --no-index --find-links "$WHEELS" --upgrade conteur cryptography
else
    "$VENV/bin/pip" install --quiet --upgrade pip
    "$VENV/bin/pip" install --upgrade "$SOURCE" cryptography
fi
ln -sfn "$VENV/bin/conteur" /usr/local/bin/conteur

echo "== $PREFIX/deploy"
rm -rf "$PREFIX/deploy"
cp -r "$SOURCE/deploy" "$PREFIX/deploy"
chmod 0755 "$PREFIX"/deploy/*.sh

echo "== systemd unit"
install -m 0644 "$SOURCE/deploy/conteur.service" "$UNIT"
systemctl daemon-reload
if [[ $START == yes ]]; then
    systemctl enable conteur.service
    systemctl restart conteur.service
    sleep 2
    systemctl --no-pager --lines=5 status conteur.service || true
fi

cat <<EOF

conteur is installed.
  database:  /var/lib/conteur/conteur.db   (owner: conteur)
  logs:      journalctl -u conteur -f
  next:      sudo $PREFIX/deploy/hotspot.sh "SSID" "PASSWORD"
  then:      open the storyteller link (conteur init prints it) in this machine's
             browser, then http://10.42.0.1:8000/join-sheet, and print it
EOF
