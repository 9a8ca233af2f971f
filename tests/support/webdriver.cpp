#include "tests/support/webdriver.h"

#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <thread>

#include "tests/support/free_port.h"
#include "tests/support/subprocess.h"

namespace ibfabric::testing {
namespace {

using nlohmann::json;

constexpr const char* kChromium = "/usr/bin/chromium";
constexpr const char* kChromedriver = "/usr/bin/chromedriver";

/// Base64 (RFC 4648, with padding) to bytes; what the screenshot command returns.
std::string decodeBase64(const std::string& text) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned value = 0;
  int bits = 0;
  for (char c : text) {
    const auto k = kAlphabet.find(c);
    if (k == std::string::npos) continue;  // padding, line breaks
    value = (value << 6) | static_cast<unsigned>(k);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((value >> bits) & 0xFF));
    }
  }
  return out;
}

}  // namespace

bool WebDriver::available() {
  return access(kChromium, X_OK) == 0 && access(kChromedriver, X_OK) == 0;
}

WebDriver::WebDriver(const std::string& tag, int width, int height) {
  const int port = freeLoopbackPort();
  driver_ = std::make_unique<BackgroundProcess>(
      std::vector<std::string>{kChromedriver, "--port=" + std::to_string(port)},
      scratchDir() / ("chromedriver-" + tag + ".log"), scratchDir());
  if (!driver_->waitForLog("started successfully", std::chrono::seconds(30)))
    throw std::runtime_error("chromedriver did not start: " + driver_->log());
  client_ = std::make_unique<httplib::Client>("127.0.0.1", port);
  client_->set_read_timeout(120, 0);
  const json args = {"--headless=new",
                     "--no-sandbox",
                     "--disable-gpu",
                     "--disable-dev-shm-usage",
                     "--no-first-run",
                     "--disable-extensions",
                     "--disable-background-networking",
                     "--window-size=" + std::to_string(width) + "," + std::to_string(height)};
  const json caps = {{"capabilities",
                      {{"alwaysMatch",
                        {{"browserName", "chrome"},
                         {"goog:chromeOptions", {{"binary", kChromium}, {"args", args}}},
                         {"goog:loggingPrefs", {{"browser", "ALL"}}}}}}}};
  session_ = command("POST", "/session", caps).at("sessionId").get<std::string>();
}

WebDriver::~WebDriver() {
  try {
    if (!session_.empty()) command("DELETE", "/session/" + session_);
  } catch (const std::exception&) {
    // chromedriver is stopped below either way
  }
  if (driver_) driver_->stop(SIGTERM, std::chrono::seconds(5));
}

json WebDriver::command(const std::string& method, const std::string& path, const json& body) {
  const std::string text = body.is_null() ? "" : body.dump();
  httplib::Result r = method == "GET"      ? client_->Get(path)
                      : method == "DELETE" ? client_->Delete(path)
                                           : client_->Post(path, text, "application/json");
  if (!r) throw std::runtime_error("webdriver " + method + " " + path + ": no answer");
  json answer = json::parse(r->body, nullptr, false);
  if (r->status != 200 || answer.is_discarded())
    throw std::runtime_error("webdriver " + method + " " + path + ": " + std::to_string(r->status) +
                             " " + r->body.substr(0, 2000));
  return answer.value("value", json());
}

void WebDriver::navigate(const std::string& url) {
  command("POST", "/session/" + session_ + "/url", {{"url", url}});
}

json WebDriver::execute(const std::string& script, const json& args) {
  return command("POST", "/session/" + session_ + "/execute/sync",
                 {{"script", script}, {"args", args}});
}

json WebDriver::waitFor(const std::string& script, const std::function<bool(const json&)>& done,
                        std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  json v = execute(script);
  while (!done(v) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    v = execute(script);
  }
  return v;
}

void WebDriver::screenshot(const std::filesystem::path& path) {
  const json png = command("GET", "/session/" + session_ + "/screenshot");
  std::ofstream out(path, std::ios::binary);
  out << decodeBase64(png.get<std::string>());
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

json WebDriver::browserLog() {
  return command("POST", "/session/" + session_ + "/se/log", {{"type", "browser"}});
}

std::filesystem::path artifactDir() {
  // Beside the test binary (in the build tree), kept after the test.
  const auto dir = std::filesystem::canonical("/proc/self/exe").parent_path() / "artifacts";
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace ibfabric::testing
