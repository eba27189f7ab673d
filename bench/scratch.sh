# scratch.sh: the scratch directory the bench scripts build and work in. It
# is no benchmark itself: a script sources it after its set -euo pipefail,
#
#   . "$(dirname "${BASH_SOURCE[0]}")/scratch.sh"
#
# which sets repo, the repository's root.

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# scratch NAME sets tmp to a new directory, memtool-NAME.XXXXXX in $TMPDIR
# (default /tmp), removed when the script exits.
scratch() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/memtool-$1.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
}

# scratch_build NAME [PKG...] makes tmp as scratch does, and builds into it
# memtool ($tmp/memtool), the driver ./bench ($tmp/bench) and each PKG, a
# package ./bench/X ($tmp/X).
scratch_build() {
	scratch "$1"
	shift
	(
		cd "$repo"
		go build -o "$tmp/memtool" ./cmd/memtool
		for pkg in ./bench "$@"; do
			go build -o "$tmp/${pkg##*/}" "$pkg"
		done
	)
}
