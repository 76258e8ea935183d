#!/usr/bin/env bash
# The build dependencies of rematch for a machine that cannot install packages (the lent GPU machine: nothing
# outside it can be reached, and its image may lack OpenBLAS, GoogleTest, Google Benchmark, CLI11,
# nlohmann-json, HDF5 and stb). Two steps:
#
#   tools/gpu_deps.sh fetch         here, on Debian 12 with apt: downloads the .deb files into build-gpu-deps/
#                                   (about 26 MB; ignored by git like every build*/ folder), and packs Open MPI
#                                   there (openmpi-bundle.tar.xz, 2.7 MB: tools/mpi_bundle.sh, for the dist
#                                   stage's mpirun; needs openmpi-bin, libopenmpi-dev installed here)
#   tools/gpu_deps.sh unpack DEST   there (tools/gpu_check.sh calls it with build-gpu/deps): unpacks them into
#                                   DEST/root, keeps only the shared libraries the machine lacks, and prints
#                                   the prefix (DEST/root/usr) on stdout
#
# The device tool carries the folder with the command: carry ["build-gpu-pre", "build-gpu-deps"]; nothing is
# unpacked into it, so it stays as small as the packages. It serves the build there, the fallback when the
# binaries prebuilt here (tools/gpu_check.sh --prebuild, which packs the libraries they load itself) cannot
# be used. The list below is the
# packages the build uses plus the shared libraries they load (HDF5 pulls in libcurl and its TLS/Kerberos
# stack), without the C/C++ runtime, which every machine with a compiler has.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deps="$root/build-gpu-deps"

packages=(
  # BLAS
  libopenblas-pthread-dev libopenblas0-pthread libgfortran5 libquadmath0
  # tests and benchmarks
  libgtest-dev libbenchmark-dev libbenchmark1debian
  # header-only libraries
  libcli11-dev nlohmann-json3-dev libstb-dev
  # HDF5 and what libhdf5_serial.so.103 loads
  libhdf5-dev libhdf5-103-1 libsz2 libaec0 libcurl4 libssl3 libzstd1 libbrotli1 libnghttp2-14 libpsl5 libidn2-0
  libunistring2 librtmp1 libssh2-1 libgnutls30 libgmp10 libhogweed6 libnettle8 libp11-kit0 libffi8 libtasn1-6
  libldap-2.5-0 libsasl2-2 libsasl2-modules-db libdb5.3 libgssapi-krb5-2 libkrb5-3 libk5crypto3 libkrb5support0
  libkeyutils1 libcom-err2
)

fetch() {
  mkdir -p "$deps"
  cd "$deps"
  rm -f ./*.deb
  apt-get download "${packages[@]}"
  echo "fetched $(find . -maxdepth 1 -name '*.deb' | wc -l) packages, $(du -sh . | cut -f1), into $deps" >&2
  # Open MPI for the dist stage (mpirun there), relocatable, from this machine's installed packages.
  "$root/tools/mpi_bundle.sh" pack "$deps/openmpi-bundle.tar.xz"
}

# One .deb's files under $2, with dpkg-deb when the machine has it, else with ar and tar.
extract() {
  if command -v dpkg-deb >/dev/null; then
    dpkg-deb -x "$1" "$2"
  else
    local tmp
    tmp="$(mktemp -d)"
    (cd "$tmp" && ar x "$1" && tar -xf data.tar.* -C "$2")
    rm -rf "$tmp"
  fi
}

unpack() {
  if ! compgen -G "$deps/*.deb" >/dev/null; then
    echo "error: no packages in $deps: run tools/gpu_deps.sh fetch on a Debian 12 machine and carry" \
      "build-gpu-deps with the command" >&2
    exit 1
  fi
  mkdir -p "$1"
  local dest
  dest="$(cd "$1" && pwd)/root"
  local prefix="$dest/usr"
  if [[ ! -f "$dest/.unpacked" ]]; then
    rm -rf "$dest"
    mkdir -p "$dest"
    for deb in "$deps"/*.deb; do extract "$deb" "$dest"; done
    # Programs of the packages (h5cc and friends) would point CMake at paths of the machine they came from.
    rm -rf "${prefix:?}/bin" "$prefix/sbin" "$prefix/share/doc" "$prefix/share/man"
    # A shared library the machine already has stays the machine's (its own copy fits its other libraries),
    # unless a link of the packages (libhdf5.so -> libhdf5_serial.so.103, ...) goes through ours.
    local kept=0 dropped=0 lib name system_libs linked
    system_libs="$("$(command -v ldconfig || echo /sbin/ldconfig)" -p 2>/dev/null || true)"
    linked="$(find "$prefix/lib" -type l -exec readlink {} \; | sed 's|.*/||' | sort -u)"
    for lib in "$prefix"/lib/x86_64-linux-gnu/lib*.so.*; do
      name="$(basename "$lib")"
      if grep -q "^[[:space:]]*$name " <<<"$system_libs" && ! grep -qxF "$name" <<<"$linked"; then
        rm -f "$lib"
        dropped=$((dropped + 1))
      else
        kept=$((kept + 1))
      fi
    done
    touch "$dest/.unpacked"
    echo "unpacked $(find "$deps" -maxdepth 1 -name '*.deb' | wc -l) packages into $dest ($kept library files kept," \
      "$dropped the machine has)" >&2
  fi
  echo "$prefix"
}

case "${1:-}" in
  fetch) fetch ;;
  unpack) unpack "${2:?usage: tools/gpu_deps.sh unpack DEST}" ;;
  *)
    echo "usage: tools/gpu_deps.sh fetch | unpack DEST" >&2
    exit 2
    ;;
esac
