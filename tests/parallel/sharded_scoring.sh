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
# Nor does it depend on threads: one process at 1, 2 and 4 threads and 2 ranks of 2 threads each write the same
# bytes, at sizes where the models' products are split into blocks (tensor/cpu/matmul.cpp).
"$R" synth --kind pairs --out big --images 12 --dev_images 4 --test_images 12 --regions 36 --feature_dim 256 --seed 3 >/dev/null
"$R" init-checkpoint --module_name SAF --out big.safetensors --vocab_path big/vocab --data_name synth_precomp \
  --img_dim 256 --word_dim 32 --embed_size 256 --sim_dim 32 --num_regions 36 --seed 1 >/dev/null
B="score --checkpoint big.safetensors --data_path big --data_name synth_precomp --split test --block_images 6"
OMP_NUM_THREADS=1 "$R" $B --out threads1.npy >/dev/null 2>&1
for t in 2 4; do
  OMP_NUM_THREADS=$t "$R" $B --out threads$t.npy >/dev/null 2>&1
  cmp threads1.npy threads$t.npy
done
mpi 2 --bind-to none -x OMP_NUM_THREADS=2 "$R" $B --out ranks2threads2.npy >/dev/null 2>&1
cmp threads1.npy ranks2threads2.npy
# A rank that fails ends every rank with its message: a device no rank has.
if mpi 2 "$R" $S --out x.npy --dist_backend none > none.txt 2>&1; then echo "--dist_backend none under mpirun -n 2 was accepted"; exit 1; fi
grep -q "mpirun started 2 processes" none.txt
# An MSCN run's checkpoint (both nets, each scored by its meta net, docs/methods/mscn.md §5) shards the same way.
M="train --method mscn --data_path d --data_name synth_precomp --noise_ratio 0.5 --batch_size 8 --embed_size 8
  --word_dim 4 --sim_dim 4 --meta_source dev --meta_size 12 --meta_interval 2 --warmup_epoch 1 --num_epochs 1
  --progress none --no_plots"
"$R" $M --run_dir mscn >/dev/null 2>&1
grep -q '"meta_prefixes"' mscn/checkpoint_best.safetensors
C="score --checkpoint mscn/checkpoint_best.safetensors --data_path d --data_name synth_precomp --split test --block_images 4"
"$R" $C --out mscn_one.npy >/dev/null 2>&1
mpi 3 "$R" $C --out mscn_ranks3.npy >/dev/null 2>&1
cmp mscn_one.npy mscn_ranks3.npy
echo "sharded scoring: 2, 3 and 4 ranks write the 1-process matrix byte for byte (an MSCN checkpoint on 3); eval" \
  "prints the same table; 1, 2 and 4 threads and 2 ranks x 2 threads write the same matrix"
