#!/usr/bin/env bash
# Install timekeeper as a service on Raspberry Pi OS (Bookworm or later; Pi 3, 4 and 5).
#
#   sudo scripts/install-pi.sh               install, or upgrade from this checkout
#   sudo scripts/install-pi.sh --uninstall   remove the service, its user and the program
#                                            (keeps /etc/timekeeper and the journal)
#   sudo scripts/install-pi.sh --purge       uninstall and also remove those
#   sudo scripts/install-pi.sh --kiosk       also show the display page full screen on the
#                                            box's HDMI screen at boot (cage + Chromium)
#   scripts/install-pi.sh --dry-run [...]    only print what it would do
#   sudo scripts/install-pi.sh --hall DESK   also: this box keeps the hall's time, as a chrony
#                                            client of the desk machine DESK (docs/hall.md)
#   sudo scripts/install-pi.sh --hall-desk   set up THIS machine as the hall's desk: a chrony
#                                            time server for the LAN and a Mosquitto broker
#                                            (no timekeeper service; docs/hall.md)
#   sudo scripts/install-pi.sh --hall-user NAME  on the desk: add (or change) the broker user
#                                            NAME (desk, or a table: 1, 2, …), asking its
#                                            password; a table also gets the hall's commands
#
# What it does: apt packages (venv, ALSA tools, lgpio for the Pi 5), a venv in /opt/timekeeper
# that can see the system's lgpio, a system user `timekeeper` in the audio and gpio groups,
# /etc/timekeeper/config.yaml (never overwritten), the unit; then enables and (re)starts it.

set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$(pwd)
PREFIX=/opt/timekeeper
UNIT=/etc/systemd/system/timekeeper.service
ETC=/etc/timekeeper
USER_NAME=timekeeper
SYSTEMCTL=${INSTALL_PI_SYSTEMCTL:-systemctl}  # (a stand-in for trying it where systemd is not PID 1)

dry=0 mode=install kiosk=0 hall_desk="" hall_user=""
KIOSK_UNIT=/etc/systemd/system/timekeeper-kiosk.service
KIOSK_USER=timekeeper-kiosk
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
    arg=${args[$i]}
    case "$arg" in
        --hall) i=$((i + 1)); hall_desk=${args[$i]:-}
            [ -n "$hall_desk" ] || { echo "install-pi: --hall takes the desk's host name" >&2; exit 2; } ;;
        --hall-desk) mode=hall-desk ;;
        --hall-user) i=$((i + 1)); hall_user=${args[$i]:-}; mode=hall-user
            [[ "$hall_user" =~ ^[A-Za-z0-9_-]{1,32}$ ]] || { echo "install-pi: --hall-user takes a user name: desk, or a table (1-32 letters, digits, - or _)" >&2; exit 2; } ;;
        --dry-run) dry=1 ;;
        --uninstall) mode=uninstall ;;
        --purge) mode=purge ;;
        --kiosk) kiosk=1 ;;
        -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
        *) echo "install-pi: unknown option $arg (see --help)" >&2; exit 2 ;;
    esac
done

run() {
    echo "+ $*"
    if [ "$dry" -eq 0 ]; then "$@"; fi
}

if [ "$dry" -eq 0 ] && [ "$(id -u)" -ne 0 ]; then
    echo "install-pi: run it with sudo (or --dry-run to see what it does)" >&2
    exit 1
fi

# 32-bit Raspberry Pi OS (armhf: armv7l, armv6l; or a 64-bit kernel under 32-bit programs,
# which uname calls aarch64): PyPI has no wheel for five of the pins, and pip would end in a
# compiler, hours in. Said before anything is installed; docs/pi.md.
check_64bit() {
    local machine bits
    machine=$(uname -m)
    bits=$(getconf LONG_BIT 2>/dev/null || echo 64)
    case "$machine" in
        armv6l|armv7l|armv8l) ;;
        aarch64|arm64) [ "$bits" = 32 ] || return 0 ;;
        *) return 0 ;;
    esac
    cat >&2 <<EOF
install-pi: this is 32-bit Raspberry Pi OS ($machine, $bits-bit programs): not supported.
install-pi:   PyPI has no 32-bit ARM wheel of numpy, pygame-ce, PyYAML, soxr and cffi at the
install-pi:   versions timekeeper is tested with (constraints.txt); pip would try to build them
install-pi:   from source, which needs compilers and SDL's headers and fails or takes hours.
install-pi: What works: 64-bit Raspberry Pi OS (Bookworm), which every Pi from the 3 on (and the
install-pi:   Zero 2 W) runs: Raspberry Pi Imager, "Raspberry Pi OS (64-bit)"; then run this again.
install-pi: Debian's packages do not fill the gap: python3-numpy, python3-yaml and python3-cffi
install-pi:   exist (older, untested here), but there is no soxr and no pygame-ce
install-pi:   (python3-pygame is pygame 2.1, not pygame-ce).
install-pi: Nothing was installed.
EOF
    exit 1
}

do_install() {
    check_64bit
    run apt-get update -qq
    packages=(python3-venv python3-pip alsa-utils)
    # lgpio: the Pi 5's GPIO library (Raspberry Pi OS has it; plain Debian does not)
    if [ "$dry" -eq 1 ] || apt-cache show python3-lgpio >/dev/null 2>&1; then
        packages+=(python3-lgpio)
    else
        echo "install-pi: no python3-lgpio in apt (not Raspberry Pi OS?): GPIO may be missing"
    fi
    run env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}"
    getent group gpio >/dev/null || run groupadd --system gpio
    getent group "$USER_NAME" >/dev/null || run groupadd --system "$USER_NAME"
    if ! id "$USER_NAME" >/dev/null 2>&1; then
        run useradd --system --gid "$USER_NAME" --home-dir /var/lib/timekeeper \
            --no-create-home --shell /usr/sbin/nologin --groups audio,gpio "$USER_NAME"
    else
        run usermod --append --groups audio,gpio "$USER_NAME"
    fi
    # the operator who installs it may use `timekeeper ctl` without sudo
    if [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
        run usermod --append --groups "$USER_NAME" "$SUDO_USER"
    fi
    # --system-site-packages: the Pi's lgpio (python3-lgpio) is used by gpiozero on a Pi 5
    [ -x "$PREFIX/.venv/bin/python" ] || run python3 -m venv --system-site-packages "$PREFIX/.venv"
    run "$PREFIX/.venv/bin/python" -m pip install -q --upgrade pip
    # built from a copy: the checkout gets no root-owned build/ or *.egg-info
    build=$(mktemp -d)
    run tar -C "$SRC" --exclude=./.venv --exclude=./.git --exclude=./build -cf "$build/src.tar" .
    run mkdir "$build/src"
    run tar -C "$build/src" -xf "$build/src.tar"
    # the dependency versions the tests ran on (constraints.txt), never newer ones
    run "$PREFIX/.venv/bin/python" -m pip install -q --upgrade -c "$SRC/constraints.txt" \
        "$build/src"
    rm -rf "$build"
    run ln -sf "$PREFIX/.venv/bin/timekeeper" /usr/local/bin/timekeeper
    run install -d -m 0755 "$ETC" "$ETC/profiles" "$ETC/sounds"
    if [ ! -e "$ETC/config.yaml" ]; then
        run install -m 0644 systemd/config.yaml "$ETC/config.yaml"
    else
        echo "install-pi: keeping your $ETC/config.yaml"
    fi
    run "$PREFIX/.venv/bin/timekeeper" check --config "$ETC/config.yaml"
    run install -m 0644 systemd/timekeeper.service "$UNIT"
    run "$SYSTEMCTL" daemon-reload
    run "$SYSTEMCTL" enable timekeeper.service
    run "$SYSTEMCTL" restart timekeeper.service
    if [ -n "$hall_desk" ]; then do_hall_box; fi
    echo "install-pi: done. Logs: journalctl -u timekeeper -f"
    echo "install-pi: control it with \`timekeeper ctl status\` (log in again first: you were"
    echo "            added to group $USER_NAME; until then: sudo timekeeper ctl status)"
}

do_kiosk() {
    # cage (a one-app Wayland compositor) and Chromium from the OS's packages; Raspberry Pi
    # OS has called its package chromium-browser, Debian calls it chromium
    browser=chromium
    if [ "$dry" -eq 0 ] && ! apt-cache show chromium >/dev/null 2>&1; then
        browser=chromium-browser
    fi
    run env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cage "$browser" fonts-dejavu-core
    if ! id "$KIOSK_USER" >/dev/null 2>&1; then
        run useradd --system --create-home --home-dir "/var/lib/$KIOSK_USER" \
            --shell /usr/sbin/nologin --groups video,render,input "$KIOSK_USER"
    fi
    # the kiosk shows the box's own display page: the web server must be on
    if ! grep -qE '^web:' "$ETC/config.yaml" 2>/dev/null; then
        echo "install-pi: turning the web pages on for the kiosk (this box only):"
        echo "            web: {listen: 127.0.0.1:8080} added to $ETC/config.yaml"
        if [ "$dry" -eq 0 ]; then
            printf '\n# added by install-pi.sh --kiosk (0.0.0.0:8080 opens it to the LAN)\nweb:\n  listen: 127.0.0.1:8080\n' >> "$ETC/config.yaml"
        fi
    fi
    port=$(sed -nE 's/^[[:space:]]+listen:[[:space:]]*"?([^"#]*:)?([0-9]+).*/\2/p' "$ETC/config.yaml" 2>/dev/null | head -1 || true)
    url="http://127.0.0.1:${port:-8080}/?table=$(hostname)"
    echo "+ write $ETC/kiosk.env (KIOSK_BROWSER=/usr/bin/$browser KIOSK_URL=$url)"
    if [ "$dry" -eq 0 ]; then
        printf 'KIOSK_BROWSER=/usr/bin/%s\nKIOSK_URL=%s\n' "$browser" "$url" > "$ETC/kiosk.env"
    fi
    run install -m 0644 systemd/timekeeper-kiosk.service "$KIOSK_UNIT"
    run "$SYSTEMCTL" daemon-reload
    run "$SYSTEMCTL" set-default graphical.target
    run "$SYSTEMCTL" enable timekeeper-kiosk.service
    run "$SYSTEMCTL" restart timekeeper.service
    run "$SYSTEMCTL" restart timekeeper-kiosk.service
    echo "install-pi: kiosk done: the screen shows $url (journalctl -u timekeeper-kiosk)"
}

do_uninstall() {
    if [ -e "$KIOSK_UNIT" ] || [ "$dry" -eq 1 ]; then
        run "$SYSTEMCTL" disable --now timekeeper-kiosk.service || true
        run rm -f "$KIOSK_UNIT" "$ETC/kiosk.env"
    fi
    if id "$KIOSK_USER" >/dev/null 2>&1; then
        run userdel --remove "$KIOSK_USER"
    fi
    if [ -e "$UNIT" ] || [ "$dry" -eq 1 ]; then
        run "$SYSTEMCTL" disable --now timekeeper.service || true
        run rm -f "$UNIT"
        run "$SYSTEMCTL" daemon-reload
    fi
    run rm -f /usr/local/bin/timekeeper
    run rm -rf "$PREFIX"
    if id "$USER_NAME" >/dev/null 2>&1 || [ "$dry" -eq 1 ]; then
        run userdel "$USER_NAME"
    fi
    # the group outlives the user while operators are in it (install adds the sudo user)
    if getent group "$USER_NAME" >/dev/null 2>&1 || [ "$dry" -eq 1 ]; then
        run groupdel "$USER_NAME"
    fi
    if [ "$mode" = purge ]; then
        run rm -rf "$ETC" /var/lib/timekeeper
    else
        echo "install-pi: kept $ETC and /var/lib/timekeeper (--purge removes them)"
    fi
}

# ---------------------------------------------------------------- the hall (docs/hall.md)

# A box keeps the hall's time: chrony follows the desk's time server, stepping the clock at
# once when it is far off (the match never times itself by the wall clock: only a hall start's
# instant is read from it, once, on receipt).
do_hall_box() {
    case "$hall_desk" in
        *[!A-Za-z0-9.:-]*) echo "install-pi: --hall $hall_desk: not a host name" >&2; exit 2 ;;
    esac
    run env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chrony
    run install -d -m 0755 /etc/chrony/conf.d
    if [ "$dry" -eq 0 ]; then
        sed "s/@DESK@/$hall_desk/" systemd/chrony-hall-box.conf > /etc/chrony/conf.d/timekeeper-hall.conf
    fi
    echo "+ (wrote /etc/chrony/conf.d/timekeeper-hall.conf: server $hall_desk)"
    run "$SYSTEMCTL" restart chrony
    echo "install-pi: this box follows the hall's time from $hall_desk; check: chronyc tracking"
}

# The desk: chrony serves its clock to the LAN (no internet needed) and Mosquitto is the bus.
do_hall_desk() {
    run apt-get update -qq
    run env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chrony mosquitto \
        mosquitto-clients espeak-ng
    run install -d -m 0755 /etc/chrony/conf.d
    run install -m 0644 systemd/chrony-hall-desk.conf /etc/chrony/conf.d/timekeeper-hall.conf
    run install -m 0644 systemd/mosquitto-hall.conf /etc/mosquitto/conf.d/timekeeper-hall.conf
    if [ ! -e /etc/mosquitto/timekeeper.acl ]; then
        run install -m 0644 systemd/mosquitto-hall.acl /etc/mosquitto/timekeeper.acl
    fi
    if [ ! -e "$PASSWD" ]; then
        run install -m 0640 -g mosquitto /dev/null "$PASSWD"
        echo "install-pi: add the desk and each box: sudo scripts/install-pi.sh --hall-user desk"
        echo "            (and one user per table, named as the table: --hall-user 1, …; docs/hall.md)"
    fi
    passwd_group
    run "$SYSTEMCTL" restart chrony mosquitto
    echo "install-pi: the desk serves time and the hall's bus; check: chronyc clients"
}

# The password file: readable by the broker (group mosquitto), by no one else; set again after
# every mosquitto_passwd, which writes a new file.
PASSWD=/etc/mosquitto/timekeeper.passwd
ACL=/etc/mosquitto/timekeeper.acl
passwd_group() {
    run chgrp mosquitto "$PASSWD"
    run chmod 0640 "$PASSWD"
}

# One broker user. A table's user also reads the hall's commands (timekeeper/HALL/all/command):
# a line of its own in the ACL, since a pattern without %u or %c draws a warning.
do_hall_user() {
    [ "$dry" -eq 1 ] || [ -e "$PASSWD" ] || { echo "install-pi: run --hall-desk first" >&2; exit 1; }
    run mosquitto_passwd "$PASSWD" "$hall_user"
    passwd_group
    if [ "$hall_user" != desk ] && ! grep -qsx "user $hall_user" "$ACL"; then
        echo "+ (adding user $hall_user to $ACL: reads the hall's commands)"
        if [ "$dry" -eq 0 ]; then
            printf '\nuser %s\ntopic read timekeeper/+/all/command\n' "$hall_user" >> "$ACL"
        fi
    fi
    run "$SYSTEMCTL" reload-or-restart mosquitto
}

case "$mode" in
    hall-desk) do_hall_desk ;;
    hall-user) do_hall_user ;;
    install) do_install; if [ "$kiosk" -eq 1 ]; then do_kiosk; fi ;;
    uninstall|purge) do_uninstall ;;
esac
