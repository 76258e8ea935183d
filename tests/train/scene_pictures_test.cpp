// The synthetic benchmark's pictures: each image drawn from its objects and attributes (an object's icon in its
// attribute's colour, with both words under it), deterministic, twins told apart, and one PNG per image with the
// split's ids file written beside the data.
#include "train/synth/scene_pictures.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "png_test_util.h"
#include "test_util.h"

namespace rematch::synth {
namespace {

namespace fs = std::filesystem;

int64_t count_color(const run::Canvas& c, run::Rgb color) {
  int64_t n = 0;
  for (int y = 0; y < c.height(); ++y)
    for (int x = 0; x < c.width(); ++x) n += c.pixel(x, y) == color;
  return n;
}

bool same_pixels(const run::Canvas& a, const run::Canvas& b) { return a.encode_png() == b.encode_png(); }

TEST(ScenePictures, DrawsEachObjectInItsAttributesColour) {
  // A red dog (object 0: a disc) and a blue car (object 2: a triangle); grammar order: red = 0, blue = 1.
  Scene s;
  s.objects = {{0, 0}, {2, 1}};
  const run::Canvas c = draw_scene(s, 0);
  EXPECT_EQ(c.width(), kPictureWidth);
  EXPECT_EQ(c.height(), kPictureHeight);
  // A disc of radius 15 less its outline is about 600 pixels; each colour fills its own icon only.
  EXPECT_GT(count_color(c, {214, 39, 40}), 400);
  EXPECT_GT(count_color(c, {31, 119, 180}), 200);
  EXPECT_EQ(count_color(c, {44, 160, 44}), 0);  // green: no green object
  EXPECT_TRUE(same_pixels(c, draw_scene(s, 0)));
}

TEST(ScenePictures, TwinsAndOtherScenesLookDifferent) {
  Scene a;
  a.objects = {{0, 0}, {2, 1}, {5, 3}};
  Scene twin = a;  // the same objects with the attributes rotated
  twin.objects[0].attribute = 1, twin.objects[1].attribute = 3, twin.objects[2].attribute = 0;
  EXPECT_FALSE(same_pixels(draw_scene(a, 4), draw_scene(twin, 4)));
  Scene other = a;
  other.objects[2].object = 13;  // same shape as object 5, another inner mark
  EXPECT_FALSE(same_pixels(draw_scene(a, 4), draw_scene(other, 4)));
  // Every attribute and object draws (sizes, textures, the last shapes and marks).
  for (int64_t attr = 0; attr < max_attribute_concepts(); ++attr) {
    Scene one;
    one.objects = {{attr * 2 % max_object_concepts(), attr}};
    EXPECT_GT(count_color(draw_scene(one, attr), {45, 45, 45}), 20) << "attribute " << attr;  // its outline
  }
}

TEST(ScenePictures, WritesOnePictureAndOneIdPerImage) {
  PairsWorldConfig c;
  c.train_images = 6, c.dev_images = 2, c.test_images = 3, c.regions = 6, c.feature_dim = 4;
  const PairsWorld w = make_pairs_world(c);
  const fs::path dir = fs::temp_directory_path() / ("rematch_scene_pictures_" + std::to_string(::getpid()));
  const PairsWorldFiles f = write_pairs_world(w, dir.string());
  EXPECT_EQ(f.images_dir, (dir / "synth_precomp" / "images").string());
  EXPECT_EQ(test::entries_of(f.images_dir).size(), 11u);
  std::ifstream ids(dir / "synth_precomp" / "test_ids.txt");
  std::vector<std::string> lines;
  for (std::string l; std::getline(ids, l);) lines.push_back(l);
  EXPECT_EQ(lines, (std::vector<std::string>{"test_0", "test_1", "test_2"}));
  const test::PngImage png = test::read_png(f.images_dir + "/test_2.png");
  EXPECT_EQ(png.width, kPictureWidth);
  EXPECT_EQ(png.height, kPictureHeight);
  const run::Canvas again = draw_scene(w.split("test").scenes[2], 2);
  EXPECT_EQ(png.at(80, 30), again.pixel(80, 30));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rematch::synth
