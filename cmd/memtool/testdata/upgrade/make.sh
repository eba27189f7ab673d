#!/bin/bash
# make.sh BIN OUT: the fixture stores one build of memtool writes into OUT
# (go build -o BIN ./cmd/memtool at that commit; OUT an absolute path).
H=$(cd "$(dirname "$0")" && pwd)
B=$1; D=$2; rm -rf $D; mkdir -p $D; cd $D
export MEMTOOL_KEY_FILE=$H/keys
P="--policy $H/policy.json"
for spec in "dir $D/dir" "sql sqlite://$D/store.db" "dirt1 $D/tenants" "dirt2 $D/tenants" "sqlt1 sqlite://$D/tenants.db"; do
  set -- $spec; kind=$1; url=$2; T=""
  case $kind in *t1) T="--tenant t1";; *t2) T="--tenant t2";; esac
  r() { cmd=$1; shift; out=$("$B" $cmd --store $url $P $T "$@" 2>&1) || echo "FAIL[$kind] $cmd $*: $out"; }
  r create --text $'line one\nline two\nsecret alpha' /memories/a.md
  r str_replace --old 'line two' --new 'line 2 edited' /memories/a.md
  r insert --text 'inserted' /memories/a.md 1
  r create --text 'bee' /memories/dir/b.md
  r create --text 'to delete' /memories/gone.md
  r delete /memories/gone.md
  r create --text 'moving' /memories/mv.md
  r rename /memories/mv.md /memories/dir/moved.md
  r create --text $'ünïcode ☃\nzwei' /memories/dir/sub/u.md
  r str_replace --old 'zwei' --new 'drei' /memories/dir/sub/u.md
done
