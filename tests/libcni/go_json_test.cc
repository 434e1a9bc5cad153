// The one Go-compatible JSON encoder (go_json.h): strings escaped as Go's encoding/json escapes them,
// in the compact form (GoMarshal) and the indented one (PrintJson).
#include "netiface/cni/go_json.h"

#include <limits>

#include <gtest/gtest.h>

#include "netiface/cni/error.h"
#include "netiface/cni/result.h"

namespace netiface::cni {
namespace {

using nlohmann::json;

std::string Str(std::string_view s) {
  std::string out;
  AppendGoString(out, s);
  return out;
}

TEST(GoJsonStringTest, HtmlCharactersAsUnicodeEscapes) {
  EXPECT_EQ(Str("<a href=\"x\">&amp;</a>"), R"("\u003ca href=\"x\"\u003e\u0026amp;\u003c/a\u003e")");
}

TEST(GoJsonStringTest, LineAndParagraphSeparatorsEscaped) {
  EXPECT_EQ(Str("a\u2028b\u2029c"), R"("a\u2028b\u2029c")");
  // Their neighbours in the same block are written as they are.
  EXPECT_EQ(Str("\u2027\u202a"), "\"\u2027\u202a\"");
}

TEST(GoJsonStringTest, ControlCharacters) {
  EXPECT_EQ(Str("\n\r\t\b\f"), R"("\n\r\t\b\f")");
  EXPECT_EQ(Str(std::string("\x00\x01\x1b\x1f", 4)), R"("\u0000\u0001\u001b\u001f")");
  EXPECT_EQ(Str("\"\\/"), R"("\"\\/")");
  EXPECT_EQ(Str("\x7f"), "\"\x7f\"");  // DEL is not escaped
}

TEST(GoJsonStringTest, InvalidUtf8EachByteAsReplacementEscape) {
  EXPECT_EQ(Str("a\xff"
                "b"),
            R"("a\ufffdb")");
  EXPECT_EQ(Str("\xe2\x80"), R"("\ufffd\ufffd")");                      // truncated sequence
  EXPECT_EQ(Str("\xc0\xaf"), R"("\ufffd\ufffd")");                      // overlong '/'
  EXPECT_EQ(Str("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");            // a surrogate
  EXPECT_EQ(Str("\xf4\x90\x80\x80"), R"("\ufffd\ufffd\ufffd\ufffd")");  // above U+10FFFF
  EXPECT_EQ(Str("\x80"), R"("\ufffd")");                                // lone continuation byte
  EXPECT_EQ(Str("é😀"), "\"é😀\"");                                       // valid UTF-8 as it is
}

TEST(GoJsonMarshalTest, CompactSortedKeysAndGoNumbers) {
  json j = {
      {"b", json::array({1, -2, 1.5, 1e21, 1e-7, 0.000001, true, nullptr})}, {"a<", "x&y"}, {"c", json::object()}};
  EXPECT_EQ(GoMarshal(j), R"({"a\u003c":"x\u0026y","b":[1,-2,1.5,1e+21,1e-7,0.000001,true,null],"c":{}})");
  EXPECT_EQ(GoMarshal(json(std::numeric_limits<uint64_t>::max())), "18446744073709551615");
  EXPECT_THROW(GoMarshal(json::binary({1, 2})), Error);
}

TEST(GoJsonMarshalTest, PrintJsonEscapesStringsAndKeysTheSameWay) {
  const std::string nasty = "<\u2028\x01\xff>";
  EXPECT_EQ(PrintJson(json(nasty)), Str(nasty));
  EXPECT_EQ(PrintJson(json({{nasty, nasty}})), "{\n    " + Str(nasty) + ": " + Str(nasty) + "\n}");
}

}  // namespace
}  // namespace netiface::cni
