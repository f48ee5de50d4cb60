const fs = require("fs");

function load(path) {
  const text = fs.readFileSync(path, "utf8");
  return text.split("\n").filter((l) => l.length > 0);
}

module.exports = { load };
