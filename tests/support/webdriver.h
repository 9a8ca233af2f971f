// WebDriver: a headless Chromium driven through chromedriver's W3C WebDriver HTTP API, for the
// browser tests of the web view (tests/e2e/ui_e2e_test.cpp). The constructor starts
// chromedriver on a free loopback port (a BackgroundProcess, its log under scratchDir()) and
// opens one session of Debian's /usr/bin/chromium (headless, no sandbox: tests run as root);
// the destructor ends the session and stops chromedriver, also when a test failed.
//
//   testing::WebDriver browser("ui");
//   browser.navigate("http://127.0.0.1:9464/ui/");
//   auto n = browser.execute("return document.querySelectorAll('rect').length");
//   browser.screenshot(artifactDir() / "map.png");
//
// Throws std::runtime_error when chromedriver does not start or a command fails. Not
// thread-safe: one owner thread.
#pragma once

#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/background_process.h"

namespace ibfabric::testing {

class WebDriver {
 public:
  /// Whether chromium and chromedriver are installed (Debian packages chromium,
  /// chromium-driver; scripts/deps.sh installs them).
  static bool available();

  /// `tag` names the log file; the window is width x height CSS pixels.
  explicit WebDriver(const std::string& tag, int width = 1600, int height = 1000);
  ~WebDriver();
  WebDriver(const WebDriver&) = delete;
  WebDriver& operator=(const WebDriver&) = delete;

  void navigate(const std::string& url);
  /// Runs `script` (a function body; `arguments` holds `args`) in the page; its return value.
  nlohmann::json execute(const std::string& script,
                         const nlohmann::json& args = nlohmann::json::array());
  /// Polls `script` until `done` accepts its value or `timeout` passes; the last value.
  nlohmann::json waitFor(const std::string& script,
                         const std::function<bool(const nlohmann::json&)>& done,
                         std::chrono::milliseconds timeout);
  /// Saves a PNG of the window.
  void screenshot(const std::filesystem::path& path);
  /// The browser console entries since the last call (chromedriver's log endpoint).
  nlohmann::json browserLog();

 private:
  nlohmann::json command(const std::string& method, const std::string& path,
                         const nlohmann::json& body = nullptr);

  std::unique_ptr<BackgroundProcess> driver_;
  std::unique_ptr<httplib::Client> client_;
  std::string session_;
};

/// Where the browser tests leave their screenshots: "artifacts" beside the test binary, i.e.
/// <build>/artifacts (created).
std::filesystem::path artifactDir();

}  // namespace ibfabric::testing
