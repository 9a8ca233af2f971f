// The web view's files (api/http/ui/: the page, its style sheet and scripts), embedded in the
// binary at build time (cmake/EmbedUi.cmake): the daemon serves them at /ui/ without reading
// the disk or fetching anything from elsewhere (docs/ui.md). Immutable; thread-safe.
#pragma once

#include <string_view>
#include <vector>

namespace ibfabric::api {

struct UiAsset {
  std::string_view name;         ///< file name, e.g. "index.html", "map.js"
  std::string_view contentType;  ///< e.g. "text/javascript; charset=utf-8"
  std::string_view etag;         ///< quoted strong ETag from the file's SHA-256
  std::string_view body;
};

/// Every asset, by name.
const std::vector<UiAsset>& uiAssets();

/// The asset named `name`, or nullptr.
inline const UiAsset* findUiAsset(std::string_view name) {
  for (const auto& a : uiAssets())
    if (a.name == name) return &a;
  return nullptr;
}

}  // namespace ibfabric::api
