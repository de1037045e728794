// SPDX-License-Identifier: Apache-2.0
// Text helpers shared by the reports (HTML pages, text summaries).
#pragma once

#include <cstdio>
#include <string>

namespace clustersim::report::internal {

// Escapes text for HTML element content and single- or double-quoted attributes.
inline std::string html_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '\'') out += "&#39;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

// printf-style formatting of one number ("%.1f", or a sentence around it: up to 255 characters).
inline std::string format_number(const char* format, double v) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace clustersim::report::internal
