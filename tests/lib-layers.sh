#!/bin/sh
# tests/lib-layers.sh [ROOT] - lib/ is in folders by stage (lib/README.md);
# a folder may include its own headers and those of the folders before it
# in the Makefile's LIB_DIRS, and a _int.h only from its own folder.  Prints
# each #include that breaks that and exits 1; silent and 0 when none does
# (`make lint` runs it).
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
order=$(sed -n 's/^LIB_DIRS *:= *//p' "$root/Makefile")
[ -n "$order" ] || { echo "lib-layers: no LIB_DIRS in $root/Makefile" >&2; exit 2; }
bad=$(cd "$root/lib" && for d in $order; do
	for f in "$d"/*.c "$d"/*.h; do
		[ -e "$f" ] || continue
		sed -n 's/^#include "\([a-z_0-9]*\.h\)".*/\1/p' "$f" | while read -r h; do
			hd=$(ls -d */"$h" 2>/dev/null | head -n 1)
			hd=${hd%%/*}
			[ -n "$hd" ] || continue
			case "$h" in
			*_int.h) [ "$hd" = "$d" ] || echo "lib/$f: $h is private to lib/$hd" ;;
			*)
				fi=0 hi=0 i=0
				for x in $order; do
					i=$((i + 1))
					[ "$x" = "$d" ] && fi=$i
					[ "$x" = "$hd" ] && hi=$i
				done
				[ "$hi" -le "$fi" ] || echo "lib/$f: $h is in lib/$hd, a later stage than lib/$d"
				;;
			esac
		done
	done
done)
[ -z "$bad" ] && exit 0
printf '%s\n' "$bad"
exit 1
