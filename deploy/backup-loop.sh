#!/usr/bin/env bash
# Copy the live chronicle to a USB stick every few minutes while the game runs.
#
#   sudo deploy/backup-loop.sh /media/USER/STICK            every 5 minutes
#   sudo deploy/backup-loop.sh --every 2 --keep 30 /media/USER/STICK
#
# Each copy is a consistent snapshot taken with `conteur backup` (SQLite's online backup
# API) while the server keeps writing, named conteur-YYYYMMDDTHHMMSSZ.db in
# DEST/conteur-backups/; only the newest --keep copies are kept. A stick pulled out or
# full is reported and retried at the next round: the loop never stops the game.
# DEST must be a mounted filesystem other than this machine's own (/): the folder is
# never created, so a stick that is not mounted cannot turn into a folder on the laptop's
# disk that only looks like a backup.
# Stop it with Ctrl-C. Restoring: see deploy/README.md ("When the laptop dies").
#
# Options: --db FILE      the live database (default /var/lib/conteur/conteur.db)
#          --every MIN    minutes between copies (default 5)
#          --keep N       copies to keep on the stick (default 24)
#          --once         take one copy and exit (for cron or a systemd timer)
set -euo pipefail

DB=/var/lib/conteur/conteur.db
EVERY=5
KEEP=24
ONCE=no
CONTEUR=${CONTEUR:-conteur}

die() {
    echo "backup-loop: $*" >&2
    exit 1
}

log() {
    echo "$(date -u +%H:%M:%SZ) $*"
}

while [[ $# -gt 0 ]]; do
    case $1 in
        --db) DB=${2:?--db needs a file}; shift 2 ;;
        --every) EVERY=${2:?--every needs minutes}; shift 2 ;;
        --keep) KEEP=${2:?--keep needs a number}; shift 2 ;;
        --once) ONCE=yes; shift ;;
        -h|--help) sed -n '2,20s/^# \{0,1\}//p' "$0"; exit 0 ;;
        -*) die "unknown option $1" ;;
        *) break ;;
    esac
done
[[ $# -eq 1 ]] || die "usage: $0 [--db FILE] [--every MIN] [--keep N] [--once] DEST"
[[ $EVERY =~ ^[1-9][0-9]*$ ]] || die "--every takes a whole number of minutes"
[[ $KEEP =~ ^[1-9][0-9]*$ ]] || die "--keep takes a whole number"
command -v "$CONTEUR" >/dev/null || die "'$CONTEUR' not found (deploy/install.sh links /usr/local/bin/conteur)"
[[ -f "$DB" ]] || die "no database at $DB"

STICK=$1
DEST="$STICK/conteur-backups"

# Why DEST cannot take a backup now, or nothing: a missing folder, or one on the same
# filesystem as / (an unmounted stick's mount point is an empty folder on this disk).
not_a_stick() {
    if [[ ! -d "$STICK" ]]; then
        echo "no folder $STICK: is the stick plugged in and mounted?"
    elif [[ $(stat -c %d -- "$STICK") == "$(stat -c %d /)" ]]; then
        echo "$STICK is on this machine's own disk, not a mounted stick (findmnt -T $STICK): is the stick plugged in and mounted?"
    fi
}

why=$(not_a_stick)
[[ -z "$why" ]] || die "$why (nothing was created)"

backup_once() {
    local target why
    target="$DEST/conteur-$(date -u +%Y%m%dT%H%M%SZ).db"
    why=$(not_a_stick)
    if [[ -n "$why" ]]; then
        log "$why"
        return 1
    fi
    if [[ ! -d "$DEST" ]] && ! mkdir "$DEST" 2>/dev/null; then
        log "cannot write to $DEST: is the stick plugged in, mounted and writable?"
        return 1
    fi
    if ! "$CONTEUR" backup --db "$DB" --to "$target"; then
        log "backup to $target FAILED"
        return 1
    fi
    # The stick may be pulled any moment: make sure the copy is on it, not in a cache.
    sync -f "$target" 2>/dev/null || sync
    log "backed up to $target"
    # Names sort by time; keep the newest $KEEP copies.
    find "$DEST" -maxdepth 1 -name 'conteur-*.db' -printf '%f\n' | sort -r \
        | tail -n +"$((KEEP + 1))" | while IFS= read -r old; do
            rm -f -- "${DEST:?}/$old"
        done
}

if [[ $ONCE == yes ]]; then
    backup_once
    exit
fi
log "backing up $DB to $DEST every $EVERY min (Ctrl-C to stop)"
while true; do
    backup_once || true
    sleep "$((EVERY * 60))"
done
