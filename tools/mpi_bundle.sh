#!/usr/bin/env bash
# Open MPI for a machine that has none (the lent GPU machine: no network, no mpirun; the GPU check's,
# tools/gpu_check.sh's dist stage): Debian 12's Open MPI 4.1.4 runtime, taken from this machine's packages and
# made relocatable, so `mpirun -n 2 build-gpu/rematch train ... --dist_backend mpi` runs there.
#
#   tools/mpi_bundle.sh pack [ARCHIVE]   here (Debian 12 with openmpi-bin, libopenmpi3, libopenmpi-dev and
#                                        libpmix2 installed): writes ARCHIVE (default
#                                        build-gpu-deps/openmpi-bundle.tar.xz; tools/gpu_deps.sh fetch calls it)
#   tools/mpi_bundle.sh unpack DEST      there: unpacks the archive into DEST (once), writes DEST/env.sh and
#                                        prints its path; `. DEST/env.sh` then puts mpirun on PATH
#   tools/mpi_bundle.sh prove [PROGRAM]  here: hides the system's Open MPI, PMIx, hwloc and libevent in a mount
#                                        namespace (unshare -m, as root) and runs `mpirun -n 2 PROGRAM` (default
#                                        build/tests/parallel_mpi_collectives mpi cpu) with the bundle alone
#   tools/mpi_bundle.sh isolate CMD...   here: CMD with them hidden the same way (e.g. tools/gpu_check.sh dist,
#                                        to try the stage as the device runs it)
#
# What it holds (under openmpi/): bin/ orterun (mpirun, mpiexec), orted, ompi_info and the C/C++ wrappers
# (opal_wrapper as mpicc/mpicxx, for a build there: tools/gpu_check.sh's fallback); lib/ libmpi, libopen-rte,
# libopen-pal, the libmca_common_* they need, libmpi_cxx, libpmix, libhwloc, libevent_core/pthreads, libudev
# (and the .so links a build links with); lib/openmpi3/ the MCA plugins whose libraries it carries (none of
# ucx, ofi/libfabric, openib/verbs, psm, psm2, netlink, nor OpenSHMEM's: the plugins needing libraries it does
# not carry are left out, and the MCA settings below never ask for them); lib/pmix/ PMIx's plugins;
# share/openmpi, share/pmix the help files and wrapper data; etc/ openmpi-mca-params.conf (Debian's with the
# settings below) and an empty default hostfile; include/ mpi.h and what it includes for C and C++.
#
# Relocation: Open MPI reads its directories from OPAL_PREFIX, OPAL_LIBDIR, OPAL_PKGLIBDIR, OPAL_PKGDATADIR,
# OPAL_SYSCONFDIR, ... (opal/mca/installdirs/env), PMIx from PMIX_PREFIX, PMIX_LIBDIR, PMIX_PKGLIBDIR, ...; env.sh
# sets each one (Debian's layout is not prefix/lib: its libdir is <prefix>/lib/x86_64-linux-gnu/openmpi/lib and
# its sysconfdir /etc/openmpi), plus PATH, LD_LIBRARY_PATH and the MCA settings that keep it to one node's
# shared memory: btl self,vader (vader's single-copy mechanism off: CMA needs ptrace rights a VM may refuse),
# pml ob1, plm isolated (local launch only, no ssh), no binding (a rank's OpenMP threads keep the cores), the
# oversubscription and root allowance the device needs (commands run as root there).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
default_archive="$root/build-gpu-deps/openmpi-bundle.tar.xz"
multiarch=x86_64-linux-gnu
syslib="/usr/lib/$multiarch"
ompi_lib="$syslib/openmpi/lib"
ompi_plugins="$ompi_lib/openmpi3"
pmix_dir="$syslib/pmix2"

# The MCA settings, as NAME=VALUE (OMPI_MCA_NAME in env.sh, NAME = VALUE in the params file).
# shellcheck disable=SC2054  # a value's commas are Open MPI's list separators
mca_settings=(
  btl=self,vader
  btl_vader_single_copy_mechanism=none
  pml=ob1
  mtl=^ofi,psm,psm2
  osc=sm,pt2pt
  plm=isolated
  ras=^slurm,gridengine
  hwloc_base_binding_policy=none
  rmaps_base_oversubscribe=1
  btl_base_warn_component_unused=0
)

# Libraries a plugin or program may need that every machine has (glibc, the C++ runtime, zlib).
runtime_re='^(ld-linux-x86-64\.so\.2|lib(c|m|dl|pthread|rt|util|resolv|stdc\+\+|gcc_s|z)\.so(\.[0-9]+)*)$'

needed() { readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\].*/\1/p'; }

pack() {
  local archive="${1:-$default_archive}"
  local v
  v="$(dpkg-query -W -f='${Version}' libopenmpi3 2>/dev/null || true)"
  if [[ "$v" != 4.1.4* ]] || [[ ! -x /usr/bin/orterun ]] || [[ ! -d "$pmix_dir/lib" ]] ||
     [[ ! -f "$ompi_lib/../include/mpi.h" ]]; then
    echo "error: needs Debian 12's Open MPI 4.1.4 installed (apt-get install openmpi-bin libopenmpi-dev;" \
      "libopenmpi3 here: ${v:-none})" >&2
    exit 1
  fi
  local stage
  stage="$(mktemp -d)"
  trap 'rm -rf "$stage"' RETURN
  local p="$stage/openmpi"
  mkdir -p "$p"/{bin,lib/openmpi3,lib/pmix,share/openmpi,share/pmix,etc,include/openmpi}
  # Programs: the launcher, its daemon (started for remote nodes only, carried for completeness), ompi_info,
  # and the wrapper compilers (one program, opal_wrapper, reading share/openmpi/<name>-wrapper-data.txt).
  cp -L /usr/bin/orterun /usr/bin/orted /usr/bin/ompi_info /usr/bin/opal_wrapper "$p/bin/"
  ln -s orterun "$p/bin/mpirun"
  ln -s orterun "$p/bin/mpiexec"
  local w
  for w in mpicc mpicxx mpic++ mpiCC; do ln -s opal_wrapper "$p/bin/$w"; done
  cp /usr/share/openmpi/help-*.txt /usr/share/openmpi/{mpicc,mpicxx,mpic++,mpiCC}-wrapper-data.txt \
    "$p/share/openmpi/"
  cp "$pmix_dir"/share/pmix/help-*.txt "$p/share/pmix/"
  # Plugins: every one whose libraries are Open MPI's own, PMIx, hwloc, libevent, libudev or the runtime.
  local ours_re='^lib(mpi|open-rte|open-pal|mca_common_(sm|ompio|monitoring)|pmix|hwloc|event_core-2\.1|event_pthreads-2\.1|udev)\.so\.[0-9]+$'
  local f n keep dropped=()
  for f in "$ompi_plugins"/mca_*.so; do
    keep=1
    while read -r n; do
      [[ -z "$n" || "$n" =~ $runtime_re || "$n" =~ $ours_re ]] || keep=0
    done < <(needed "$f")
    if ((keep)); then cp "$f" "$p/lib/openmpi3/"; else dropped+=("$(basename "$f" .so)"); fi
  done
  cp "$pmix_dir"/lib/pmix/pmix_mca_*.so "$p/lib/pmix/"
  # Libraries: libmpi and the C++ bindings' libmpi_cxx (what a program links), and what they, the programs
  # and the kept plugins load, transitively, but the runtime.
  cp -L "$syslib/libmpi.so.40" "$syslib/libmpi_cxx.so.40" "$p/lib/"
  local todo=("$p"/bin/orterun "$p"/bin/orted "$p"/bin/ompi_info "$p"/bin/opal_wrapper "$p"/lib/openmpi3/*.so
              "$p"/lib/pmix/*.so "$p/lib/libmpi.so.40" "$p/lib/libmpi_cxx.so.40")
  local -A seen=([libmpi.so.40]=1 [libmpi_cxx.so.40]=1)
  local path cache
  cache="$(ldconfig -p)"
  while ((${#todo[@]})); do
    f="${todo[0]}"
    todo=("${todo[@]:1}")
    while read -r n; do
      [[ -z "$n" || "$n" =~ $runtime_re || -n "${seen[$n]:-}" ]] && continue
      seen[$n]=1
      path="$(awk -v n="$n" '$1 == n && $0 ~ /x86-64/ {print $NF; exit}' <<<"$cache")"
      [[ -n "$path" ]] || { echo "error: $n (needed by $f) not found here" >&2; exit 1; }
      cp -L "$path" "$p/lib/$n"
      todo+=("$p/lib/$n")
    done < <(needed "$f")
  done
  # The links a build links with (-lmpi, -lmpi_cxx).
  ln -s libmpi.so.40 "$p/lib/libmpi.so"
  ln -s libmpi_cxx.so.40 "$p/lib/libmpi_cxx.so"
  strip --strip-unneeded "$p"/lib/*.so.* "$p"/lib/openmpi3/*.so "$p"/lib/pmix/*.so 2>/dev/null || true
  strip "$p"/bin/orterun "$p"/bin/orted "$p"/bin/ompi_info "$p"/bin/opal_wrapper 2>/dev/null || true
  # Headers for C and C++ (mpi.h includes the C++ bindings' headers unless OMPI_SKIP_MPICXX).
  local inc="$ompi_lib/../include"
  cp "$inc"/mpi.h "$inc"/mpi-ext.h "$inc"/mpi_portable_platform.h "$p/include/"
  mkdir -p "$p/include/openmpi/ompi/mpi"
  cp -r "$inc/openmpi/mpiext" "$p/include/openmpi/"
  cp -r "$inc/openmpi/ompi/mpi/cxx" "$p/include/openmpi/ompi/mpi/"
  # Debian's parameters, then ours; an empty default hostfile (this node only).
  {
    grep -v '^[[:space:]]*\(#\|$\)' /etc/openmpi/openmpi-mca-params.conf | grep -v '^[[:space:]]*\(btl\|pml\|mtl\|osc\) *='
    echo "# tools/mpi_bundle.sh: one node's shared memory, nothing that needs libraries the bundle lacks"
    local s
    for s in "${mca_settings[@]}"; do echo "${s%%=*} = ${s#*=}"; done
  } >"$p/etc/openmpi-mca-params.conf"
  : >"$p/etc/openmpi-default-hostfile"
  {
    echo "Open MPI $(dpkg-query -W -f='${Version}' libopenmpi3), PMIx $(dpkg-query -W -f='${Version}' libpmix2)," \
      "hwloc $(dpkg-query -W -f='${Version}' libhwloc15) from $(sed -n 's/^PRETTY_NAME=//p' /etc/os-release | tr -d '"')"
    echo "packed $(date -u +%Y-%m-%dT%H:%MZ) by tools/mpi_bundle.sh"
    echo "plugins left out (libraries not carried): ${dropped[*]}"
  } >"$p/VERSION"
  mkdir -p "$(dirname "$archive")"
  tar -C "$stage" -cf - openmpi | xz -9 -T1 >"$archive.tmp"
  mv "$archive.tmp" "$archive"
  echo "packed $(find "$p" -type f | wc -l) files ($(du -sh "$p" | cut -f1) unpacked, $(du -sb "$p" | cut -f1) bytes;" \
    "$(find "$p/lib/openmpi3" -name '*.so' | wc -l) MCA plugins, ${#dropped[@]} left out) into $archive" \
    "($(du -b "$archive" | cut -f1) bytes)" >&2
}

# env.sh for a bundle at $1 (the folder holding openmpi/).
write_env() {
  local p="$1/openmpi" s
  {
    echo "# Open MPI from tools/mpi_bundle.sh, relocated to $p (source this file)."
    echo "export OPAL_PREFIX='$p' OPAL_EXEC_PREFIX='$p' OPAL_BINDIR='$p/bin' OPAL_SBINDIR='$p/bin'"
    echo "export OPAL_LIBDIR='$p/lib' OPAL_PKGLIBDIR='$p/lib/openmpi3' OPAL_LIBEXECDIR='$p/bin'"
    echo "export OPAL_DATAROOTDIR='$p/share' OPAL_DATADIR='$p/share' OPAL_PKGDATADIR='$p/share/openmpi'"
    echo "export OPAL_SYSCONFDIR='$p/etc' OPAL_INCLUDEDIR='$p/include' OPAL_PKGINCLUDEDIR='$p/include/openmpi'"
    echo "export PMIX_PREFIX='$p' PMIX_EXEC_PREFIX='$p' PMIX_LIBDIR='$p/lib' PMIX_PKGLIBDIR='$p/lib/pmix'"
    echo "export PMIX_DATADIR='$p/share' PMIX_PKGDATADIR='$p/share/pmix' PMIX_SYSCONFDIR='$p/etc'"
    echo "export OMPI_MCA_mca_base_component_path='$p/lib/openmpi3' PMIX_MCA_mca_base_component_path='$p/lib/pmix'"
    for s in "${mca_settings[@]}"; do echo "export OMPI_MCA_${s%%=*}='${s#*=}'"; done
    echo "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
    echo "export PATH='$p/bin':\"\$PATH\""
    echo "export LD_LIBRARY_PATH='$p/lib'\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
  } >"$1/env.sh"
}

unpack() {
  local archive="${MPI_BUNDLE:-$default_archive}"
  [[ -f "$archive" ]] || { echo "error: no $archive: run tools/mpi_bundle.sh pack here and carry it" >&2; exit 1; }
  mkdir -p "$1"
  local dest
  dest="$(cd "$1" && pwd)"
  if [[ ! -f "$dest/.unpacked" || "$(cat "$dest/.unpacked")" != "$(stat -c %Y:%s "$archive")" ]]; then
    rm -rf "$dest/openmpi"
    # Python's tarfile where tar cannot run xz (the image may lack xz-utils).
    tar -xJf "$archive" -C "$dest" 2>/dev/null ||
      "${PYTHON:-python3}" -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$archive" "$dest"
    stat -c %Y:%s "$archive" >"$dest/.unpacked"
  fi
  write_env "$dest"
  echo "$dest/env.sh"
}

# COMMAND with the system's Open MPI, PMIx, hwloc and libevent hidden (here, as root): a private mount namespace
# (unshare -m) in which each of their folders is covered by an empty folder and each file by /dev/null, so
# anything that still reaches for them fails loudly ("file too short", "Permission denied").
isolate() {
  [[ "$(id -u)" == 0 ]] || { echo "error: needs root (unshare -m, mount --bind)" >&2; exit 1; }
  # shellcheck disable=SC2016  # expanded by the inner shell
  unshare -m bash -c '
set -euo pipefail
mount --make-rprivate /
empty="$(mktemp -d)"
hidden=0
for d in /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/pmix2 /usr/share/openmpi /etc/openmpi \
         /usr/lib/x86_64-linux-gnu/hwloc /usr/share/hwloc; do
  [[ -d "$d" ]] && mount --bind "$empty" "$d" && hidden=$((hidden + 1))
done
for f in /usr/bin/{mpirun,mpiexec,orterun,orted,ompi_info,opal_wrapper,mpicc,mpicxx}* \
         /usr/lib/x86_64-linux-gnu/lib{mpi,mpi_cxx,open-rte,open-pal,mca_common_,pmix,hwloc,event_core-2.1,event_pthreads-2.1,event-2.1,oshmem}*.so*; do
  [[ -e "$f" && ! -L "$f" && ! -d "$f" ]] || continue
  mount --bind /dev/null "$f" && hidden=$((hidden + 1))
done
echo "hidden: $hidden system files and folders of Open MPI, PMIx, hwloc and libevent" >&2
exec "$@"' _ "$@"
}

# The proof (here, as root): with the system's Open MPI hidden (isolate), the bundle alone runs PROGRAM on 2
# ranks.
prove() {
  local archive="${MPI_BUNDLE:-$default_archive}" program=("$@")
  ((${#program[@]})) || program=("$root/build/tests/parallel_mpi_collectives" mpi cpu)
  local dir
  dir="$(mktemp -d)"
  MPI_BUNDLE="$archive" unpack "$dir" >/dev/null
  echo "bundle: $archive ($(du -b "$archive" | cut -f1) bytes), unpacked into $dir: $(du -sb "$dir/openmpi" | cut -f1) bytes"
  # shellcheck disable=SC2016  # expanded by the inner shell
  isolate env -i PATH=/usr/bin:/bin HOME="$HOME" bash -c '
  set -euo pipefail
  echo "without the bundle: mpirun --version: $(mpirun --version 2>&1 | head -n 1)"
  echo "without the bundle: $2: $("$2" 2>&1 | head -n 1)"
  . "$1/env.sh"
  shift
  echo "with the bundle: mpirun is $(command -v mpirun): $(mpirun --version | head -n 1)"
  echo "$1 loads: $(ldd "$1" | grep -E "libmpi|libhwloc|libevent_core|libudev" | awk "{print \$3}" | tr "\n" " ")"
  t0=$(date +%s.%N)
  mpirun -n 2 "$@" >/tmp/mpi_bundle_prove.out 2>&1 || { cat /tmp/mpi_bundle_prove.out; echo "mpirun failed"; exit 1; }
  t1=$(date +%s.%N)
  cat /tmp/mpi_bundle_prove.out
  echo "mpirun -n 2 $*: exit 0 in $(echo "$t1 - $t0" | bc) s, $(grep -ciE "warn|error|unable|not found" /tmp/mpi_bundle_prove.out || true) lines with warn/error/unable/not found"
' _ "$dir" "${program[@]}"
  rm -rf "$dir"
}

case "${1:-}" in
  pack) pack "${2:-}" ;;
  unpack) unpack "${2:?usage: tools/mpi_bundle.sh unpack DEST}" ;;
  prove) shift; prove "$@" ;;
  isolate) shift; isolate "$@" ;;
  *)
    echo "usage: tools/mpi_bundle.sh pack [ARCHIVE] | unpack DEST | prove [PROGRAM ARGS...] | isolate COMMAND..." >&2
    exit 2
    ;;
esac
