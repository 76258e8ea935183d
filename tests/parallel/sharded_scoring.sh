#!/bin/sh
# Sharded scoring (docs/distributed.md §3): `mpirun -n N rematch score` writes the matrix one process writes,
# byte for byte, and `eval` prints the same table. Usage: sharded_scoring.sh REMATCH MPIRUN WORKDIR
set -eu
R=$1 MPIRUN=$2 W=$3
rm -rf "$W" && mkdir -p "$W" && cd "$W"
mpi() { "$MPIRUN" --allow-run-as-root --oversubscribe -n "$@"; }
"$R" synth --kind pairs --out d --images 12 --dev_images 4 --test_images 23 --regions 4 --feature_dim 8 --seed 3 >/dev/null
for m in SGR SAF; do
  "$R" init-checkpoint --module_name $m --out $m.safetensors --vocab_path d/vocab --data_name synth_precomp \
    --img_dim 8 --word_dim 8 --embed_size 16 --sim_dim 8 --num_regions 4 --seed 1 >/dev/null
done
S="score --checkpoint SGR.safetensors --checkpoint SAF.safetensors --data_path d --data_name synth_precomp --split test --block_images 4 --block_captions 30"
"$R" $S --out one.npy >/dev/null 2>&1
for n in 2 3 4; do
  mpi $n "$R" $S --out ranks$n.npy >/dev/null 2>&1
  cmp one.npy ranks$n.npy
done
E="eval --checkpoint SGR.safetensors --data_path d --data_name synth_precomp --split test --block_images 4"
"$R" $E > one.txt 2>/dev/null
mpi 3 "$R" $E > three.txt 2>/dev/null
cmp one.txt three.txt
# A rank that fails ends every rank with its message: a device no rank has.
if mpi 2 "$R" $S --out x.npy --dist_backend none > none.txt 2>&1; then echo "--dist_backend none under mpirun -n 2 was accepted"; exit 1; fi
grep -q "mpirun started 2 processes" none.txt
echo "sharded scoring: 2, 3 and 4 ranks write the 1-process matrix byte for byte; eval prints the same table"
