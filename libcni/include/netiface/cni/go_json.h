// Go's encoding/json output, byte for byte: the one encoder of the suite for every file and message a
// Go program (the reference plugins, libcni, flanneld) writes or reads back. PrintJson (result.h) is the
// indented form of the same encoding.
//
// Strings, as Go's encoder writes them with its default HTML-safe escaping:
//   " and \ as \" and \\; \n \r \t \b \f as those short escapes (\b and \f: Go 1.22 and later; older Go
//   wrote \u0008 and \u000c); every other byte below 0x20 as \u00XX (lowercase hex);
//   <, >, & as \u003c, \u003e, \u0026; U+2028 and U+2029 as \u2028 and \u2029;
//   each byte that does not start a valid UTF-8 sequence (overlong forms, surrogates and values above
//   U+10FFFF included) as \ufffd; everything else, 0x7f and valid non-ASCII included, as it is.
// Numbers: integers in decimal; floats as Go's float64 (shortest round trip, fixed notation for
// 1e-6 <= |f| < 1e21, else an exponent without leading zeros: 1e-7, 1e+21). Objects in nlohmann's
// key order, which is Go's order for a map (sorted bytewise).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace netiface::cni {

// Appends `s` as a JSON string literal, quotes included.
void AppendGoString(std::string& out, std::string_view s);
// Appends `j` as json.Marshal writes it (compact). Throws Error(kInternal) for a non-finite number or
// a binary value, which Go cannot encode.
void AppendGoJson(std::string& out, const nlohmann::json& j);
// json.Marshal of `j`.
std::string GoMarshal(const nlohmann::json& j);

}  // namespace netiface::cni
