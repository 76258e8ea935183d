// Pictures of the synthetic benchmark's images (docs/viz.md §2.3): each image drawn from its planted objects and
// attributes, so a report shows what a model was asked to match. An object instance is its object's icon (one of
// eight shapes with one of six inner marks: 48 icons for the grammar's 48 nouns) in its attribute's look — a
// colour (red, blue, ...), a size (small, large, tall, tiny) or a texture (striped, wooden, metal, shiny, dirty,
// wet, old, new, round) — with the attribute and the noun written under it. Instances sit in a 3 x 2 grid, in an
// order drawn from the image's own index, so twins (the same objects with their attributes swapped) look alike
// but not the same. Pictures are deterministic in the scene and the index.
#pragma once

#include <cstdint>
#include <string>

#include "train/synth/pairs_world.h"
#include "viz/png_canvas.h"

namespace rematch::synth {

constexpr int kPictureWidth = 160;
constexpr int kPictureHeight = 120;

// The picture of one image: `index` is its position in its split (it only places the instances).
run::Canvas draw_scene(const Scene& scene, int64_t index);

// The id of image i of a split in the data set's `<split>_ids.txt` and the name of its picture without
// extension: "<split>_<i>", unique over the splits so that one folder holds every picture.
std::string scene_id(const std::string& split, int64_t index);

// Writes DIR/<data_name>/images/<id>.png for every image of every split and DIR/<data_name>/<split>_ids.txt (the
// ids in row order, as the official layout ships them); returns the images folder.
std::string write_scene_pictures(const PairsWorld& world, const std::string& out_dir);

}  // namespace rematch::synth
