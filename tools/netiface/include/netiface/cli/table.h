// Plain-text tables of the CLI's listings: columns padded to their widest cell, two spaces apart.
#pragma once

#include <string>
#include <vector>

namespace netiface::cli {

// One line per row (the first is the header), each ending in "\n"; no padding after the last column.
std::string FormatColumns(const std::vector<std::vector<std::string>>& rows);

}  // namespace netiface::cli
