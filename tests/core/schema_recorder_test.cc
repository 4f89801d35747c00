// SchemaRecorder: what ConfigNode's typed reads record (types, bounds, enums, required keys,
// the keys a map allows, lists), with list indexes dropped and paths made relative to the
// root; the loosest of several readers bounds a field; nothing is recorded without a recorder.
#include "core/config/schema_recorder.h"

#include <gtest/gtest.h>

#include "core/config/config_node.h"

namespace aiscale::config {
namespace {

TEST(SchemaRecorder, RecordsWhatEachReadAccepts) {
  SchemaRecorder rec("spec");
  ConfigErrors errors;
  errors.set_recorder(&rec);
  const ConfigNode root =
      ParseConfig("spec: {a: 1, items: [{x: 1}, {x: 2}]}\nother: {z: 1}\n", "t.yaml", errors);
  const ConfigNode spec = root.Child("spec");
  spec.CheckKnown({"a", "b", "c", "d", "e", "items"});
  spec.Int("a", 0, Between(0, 10));
  spec.Number("b", 0.5, Above(0));
  spec.Enum("c", "x", {"x", "y"});
  spec.RequiredString("d");  // absent: an error, and recorded as required
  spec.DurationSeconds("e", 30, AtLeast(0));
  for (const ConfigNode& item : spec.Child("items").Items()) item.Bool("x", false);
  root.Child("other").Int("z", 0);  // outside the root: not recorded
  const auto& f = rec.fields();
  ASSERT_TRUE(f.count(""));
  EXPECT_EQ(f.at("").known, (std::set<std::string>{"a", "b", "c", "d", "e", "items"}));
  EXPECT_EQ(f.at("a").types, std::set<FieldType>{FieldType::kInteger});
  EXPECT_EQ(f.at("a").min, 0);
  EXPECT_EQ(f.at("a").max, 10);
  EXPECT_TRUE(f.at("b").min_exclusive);
  EXPECT_EQ(f.at("b").fallbacks, std::set<std::string>{"0.5"});
  EXPECT_EQ(f.at("c").enum_values, (std::set<std::string>{"x", "y"}));
  EXPECT_TRUE(f.at("d").required);
  EXPECT_EQ(f.at("e").types, std::set<FieldType>{FieldType::kDuration});
  EXPECT_EQ(f.at("items").types, std::set<FieldType>{FieldType::kArray});
  EXPECT_EQ(f.at("items[].x").types, std::set<FieldType>{FieldType::kBoolean});
  EXPECT_EQ(f.count("z"), 0u);
  EXPECT_EQ(f.count("other.z"), 0u);
}

TEST(SchemaRecorder, TheLoosestReaderBounds) {
  SchemaRecorder rec("");
  ConfigErrors errors;
  errors.set_recorder(&rec);
  const ConfigNode root = ParseConfig("n: 1\n", "t.yaml", errors);
  root.Int("n", 0, Between(1, 5));
  root.Int("n", 0, Between(0, 9));
  root.Int("m", 0, Between(0, 9));
  root.Int("m", 0);  // no bounds at all
  const auto& f = rec.fields();
  EXPECT_EQ(f.at("n").min, 0);
  EXPECT_EQ(f.at("n").max, 9);
  EXPECT_EQ(f.at("n").min_reads, f.at("n").numeric_reads);
  EXPECT_LT(f.at("m").min_reads, f.at("m").numeric_reads) << "one reader sets no bound";
}

TEST(SchemaRecorder, NothingWithoutARecorder) {
  ConfigErrors errors;
  const ConfigNode root = ParseConfig("n: 1\n", "t.yaml", errors);
  EXPECT_EQ(root.Int("n", 0), 1);
  EXPECT_EQ(errors.recorder(), nullptr);
}

}  // namespace
}  // namespace aiscale::config
