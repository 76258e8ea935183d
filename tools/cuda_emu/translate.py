#!/usr/bin/env python3
"""Rewrites a CUDA source of rematch into C++ for the CUDA emulator (docs/cuda_emulator.md).

Only what C++ cannot express changes, each on its own line, so line numbers and the rest of the text stay
those of the source (a #line directive names the original file for compiler messages):
  kernel<<<grid, block, smem, stream>>>(args)  ->  ::cuda_emu::Launch(grid, block, smem, stream).run(
      "kernel", [&](auto... a) { kernel(a...); })(args)     (template arguments deduced as nvcc deduces them)
      or .run(kernel, "kernel")(args) when the file passes `kernel` to cudaFunc*/cudaOccupancy* (a pointer
      whose attributes the launch must find)
  __shared__ T name[N];                         ->  auto& name = ::cuda_emu::static_shared<T[N]>(id);
  extern __shared__ __align__(16) T name[];     ->  T* name = ::cuda_emu::dynamic_shared<T>();
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));  ->  y = ::cuda_emu::ex2_approx_ftz(x);
Anything else in the kernel language that C++ lacks (other inline PTX) is refused with the file and line.

usage: translate.py SOURCE OUTPUT
"""
import itertools
import os
import re
import sys

LAUNCH = re.compile(r"(?P<name>[A-Za-z_][\w:]*(?:<[^<>;()]*>)?)\s*<<<(?P<cfg>.*?)>>>\s*\(")
DYNAMIC_SHARED = re.compile(
    r"extern\s+__shared__\s+(?:__align__\(\s*\d+\s*\)\s+)?(?P<type>[\w:<>, ]+?)\s+(?P<name>\w+)\s*\[\s*\]\s*;")
STATIC_SHARED = re.compile(
    r"__shared__\s+(?:__align__\(\s*\d+\s*\)\s+)?(?P<type>[\w:<>, ]+?)\s+(?P<name>\w+)\s*(?P<dims>(?:\[[^\]]+\])*)\s*;")
EX2 = re.compile(
    r'asm\(\s*"ex2\.approx\.ftz\.f32 %0, %1;"\s*:\s*"=f"\((?P<out>\w+)\)\s*:\s*"f"\((?P<arg>.*)\)\s*\)\s*;')

_ids = itertools.count(1)


POINTER_USES = re.compile(r"cuda(?:Func\w*|Occupancy\w*)\(\s*(?:&\w+\s*,\s*)?(?:&\w+\s*,\s*)?(\w+)\s*,")


def launch(m, pointers):
    name, cfg = m["name"], m["cfg"]
    if name in pointers:
        return f'::cuda_emu::Launch({cfg}).run({name}, "{name}")('
    return f'::cuda_emu::Launch({cfg}).run("{name}", [&](auto... a) {{ {name}(a...); }})('


def translate_line(line, where, pointers):
    line = DYNAMIC_SHARED.sub(lambda m: f"{m['type']}* {m['name']} = ::cuda_emu::dynamic_shared<{m['type']}>();",
                              line)
    line = STATIC_SHARED.sub(
        lambda m: f"auto& {m['name']} = ::cuda_emu::static_shared<{m['type']}{m['dims']}>({next(_ids)});", line)
    line = LAUNCH.sub(lambda m: launch(m, pointers), line)
    line = EX2.sub(lambda m: f"{m['out']} = ::cuda_emu::ex2_approx_ftz({m['arg']});", line)
    for token in ("<<<", ">>>(", "__shared__", "asm(", "asm volatile("):
        if token in line and not line.lstrip().startswith("//"):
            sys.exit(f"{where}: the CUDA emulator cannot translate this line (teach tools/cuda_emu/translate.py):\n"
                     f"  {line.strip()}")
    return line


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    source, output = sys.argv[1], sys.argv[2]
    with open(source, encoding="utf-8") as f:
        text = f.read()
    pointers = set(POINTER_USES.findall(text))
    lines = text.split("\n")
    out = [f'#line 1 "{os.path.abspath(source)}"'] + [translate_line(l, f"{source}:{i + 1}", pointers) for i, l in enumerate(lines)]
    text = "\n".join(out)
    try:
        with open(output, encoding="utf-8") as f:
            if f.read() == text:
                return  # unchanged: keep the timestamp, so nothing that includes it is rebuilt
    except FileNotFoundError:
        pass
    with open(output, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
