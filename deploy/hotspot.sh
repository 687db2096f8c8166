#!/usr/bin/env bash
# Turn this machine's Wi-Fi into the venue hotspot with NetworkManager, so phones join
# with no internet and no captive portal: NetworkManager's "shared" mode hands out
# addresses (DHCP) and DNS itself, and the machine is always at the same address.
#
#   sudo deploy/hotspot.sh SSID PASSWORD      start (or restart) the hotspot
#   sudo deploy/hotspot.sh --down             stop it, give the Wi-Fi back
#
# Options (before SSID): --ifname wlan0   the Wi-Fi device (default: the first one)
#                        --address CIDR   the machine's address (default 10.42.0.1/24)
#                        --channel N      2.4 GHz channel (default 6)
#                        --port N         the port conteur listens on, for the message
#                        --boot           bring the hotspot up again at every boot
set -euo pipefail

CON_NAME="conteur-hotspot"
ADDRESS="10.42.0.1/24"
CHANNEL=6
PORT=8000
IFNAME=""
AUTOCONNECT=no

# --help: the usage on stdout, exit 0; a wrong call: the usage on stderr, exit 2.
usage() {
    if [[ ${1:-error} == help ]]; then
        sed -n '2,14s/^# \{0,1\}//p' "$0"
        exit 0
    fi
    sed -n '2,14s/^# \{0,1\}//p' "$0" >&2
    exit 2
}

die() {
    echo "hotspot: $*" >&2
    exit 1
}

wifi_device() {
    # No early exit in awk, nor grep -q or head below: under pipefail, a reader that stops
    # early kills nmcli with SIGPIPE and turns a match into a failure.
    nmcli -t -f DEVICE,TYPE device status | awk -F: '$2 == "wifi" && !found { print $1; found = 1 }'
}

need_nmcli() {
    command -v nmcli >/dev/null || die "nmcli not found: install network-manager (see deploy/README.md)"
}

down() {
    need_nmcli
    if nmcli -t -f NAME connection show --active | grep -x "$CON_NAME" >/dev/null; then
        nmcli connection down "$CON_NAME"
    fi
    echo "hotspot stopped (the connection '$CON_NAME' is kept; delete it with: nmcli connection delete $CON_NAME)"
}

up() {
    local ssid=$1 password=$2
    [[ ${#password} -ge 8 && ${#password} -le 63 ]] || die "the password must be 8 to 63 characters (WPA2)"
    [[ ${#ssid} -ge 1 && ${#ssid} -le 32 ]] || die "the SSID must be 1 to 32 characters"
    need_nmcli
    if [[ -z "$IFNAME" ]]; then
        IFNAME=$(wifi_device)
        [[ -n "$IFNAME" ]] || die "no Wi-Fi device found (nmcli device status); is it blocked? try: rfkill unblock wifi"
    fi

    # Start from a clean definition each time, so a changed password or SSID applies.
    if nmcli -t -f NAME connection show | grep -x "$CON_NAME" >/dev/null; then
        nmcli connection delete "$CON_NAME" >/dev/null
    fi
    # band bg: every phone sees 2.4 GHz, and it carries further through walls.
    # WPA2 (rsn + ccmp) only: older phones fail to join WPA3-only or mixed networks.
    # PMF off: optional under WPA2, and some phone and Wi-Fi chip pairs fail to join with it.
    # No IPv6: one address to print on the join sheet, one to put in the certificate.
    nmcli connection add type wifi ifname "$IFNAME" con-name "$CON_NAME" \
        autoconnect "$AUTOCONNECT" ssid "$ssid" \
        802-11-wireless.mode ap 802-11-wireless.band bg 802-11-wireless.channel "$CHANNEL" \
        wifi-sec.key-mgmt wpa-psk wifi-sec.proto rsn \
        wifi-sec.pairwise ccmp wifi-sec.group ccmp wifi-sec.pmf disable \
        wifi-sec.psk "$password" \
        ipv4.method shared ipv4.addresses "$ADDRESS" ipv6.method disabled >/dev/null
    nmcli connection up "$CON_NAME" >/dev/null

    local address
    address=$(nmcli -g IP4.ADDRESS device show "$IFNAME" | sed -n 1p)
    address=${address%%/*}
    [[ -n "$address" ]] || address=${ADDRESS%%/*}
    cat <<EOF
Hotspot up on $IFNAME.
  Wi-Fi network: $ssid
  Password:      $password
  Phones open:   http://$address:$PORT/   (https://$address:$PORT/ if conteur serves with --tls)
The phones will say the network has no internet: tell them to stay connected.
Join sheets name this network when conteur serves with --wifi "$ssid"
(or CONTEUR_WIFI="$ssid" in the service's environment). Check with: conteur doctor
Stop it with: sudo $0 --down
EOF
}

while [[ $# -gt 0 ]]; do
    case $1 in
        --down) down; exit 0 ;;
        --ifname) IFNAME=${2:?--ifname needs a device}; shift 2 ;;
        --address) ADDRESS=${2:?--address needs an address like 10.42.0.1/24}; shift 2 ;;
        --channel) CHANNEL=${2:?--channel needs a number}; shift 2 ;;
        --port) PORT=${2:?--port needs a number}; shift 2 ;;
        --boot) AUTOCONNECT=yes; shift ;;
        -h|--help) usage help ;;
        -*) die "unknown option $1" ;;
        *) break ;;
    esac
done
[[ $# -eq 2 ]] || usage
up "$1" "$2"
