// The galleries: filter by failure mode and by conditions on the attributes, sort, show one item's values.
// Plain JavaScript, nothing fetched: the values are the JSON block beside each gallery.
(function () {
  "use strict";
  var apply = {};

  function number(v) {
    if (typeof v === "number") return v;
    if (typeof v === "string" && v.trim() !== "" && isFinite(Number(v))) return Number(v);
    return null;
  }

  function compare(a, b) {
    var x = number(a), y = number(b);
    if (x !== null && y !== null) return x - y;
    x = String(a).toLowerCase();
    y = String(b).toLowerCase();
    return x < y ? -1 : x > y ? 1 : 0;
  }

  function holds(value, op, wanted) {
    var c = compare(value, wanted);
    switch (op) {
      case "=": return c === 0;
      case "!=": return c !== 0;
      case "<": return c < 0;
      case "<=": return c <= 0;
      case ">": return c > 0;
      default: return c >= 0;
    }
  }

  // "eyewear=sunglasses yaw > 20, beard" -> conditions on named columns, and plain words.
  function parse(text, columns) {
    var query = { terms: [], words: [], error: "" };
    text.replace(/\s*(<=|>=|!=|=|<|>)\s*/g, "$1").split(/[\s,]+/).forEach(function (token) {
      if (!token) return;
      var m = /^([^<>=!]+)(<=|>=|!=|=|<|>)(.*)$/.exec(token);
      if (!m) { query.words.push(token.toLowerCase()); return; }
      var col = columns.indexOf(m[1]);
      if (col < 0) { query.error = "no attribute " + m[1] + " (ignored)"; return; }
      query.terms.push({ col: col, op: m[2], value: m[3] });
    });
    return query;
  }

  function setup(root) {
    var id = root.getAttribute("data-gallery");
    var el = function (name) { return document.getElementById(id + "-" + name); };
    if (!el("data")) return;
    var data = JSON.parse(el("data").textContent), columns = data.columns, rows = data.rows;
    var box = root.querySelector(".items"), items = Array.prototype.slice.call(box.children);
    var text = rows.map(function (r) { return r.join(" ").toLowerCase(); });
    var modeCol = columns.indexOf("mode"), ascending = true;

    apply[id] = function () {
      var mode = el("mode") ? el("mode").value : "", query = parse(el("filter").value, columns), shown = 0;
      el("error").textContent = query.error;
      items.forEach(function (item) {
        var i = +item.getAttribute("data-i"), r = rows[i];
        var ok = (mode === "" || String(r[modeCol]) === mode) &&
          query.terms.every(function (t) { return holds(r[t.col], t.op, t.value); }) &&
          query.words.every(function (w) { return text[i].indexOf(w) >= 0; });
        item.hidden = !ok;
        if (ok) shown += 1;
      });
      el("count").textContent = shown + " of " + items.length + " match";
    };

    function sort() {
      var col = el("sort").value === "" ? -1 : +el("sort").value, sign = ascending ? 1 : -1;
      items.slice().sort(function (p, q) {
        var i = +p.getAttribute("data-i"), j = +q.getAttribute("data-i");
        return sign * (col < 0 ? i - j : compare(rows[i][col], rows[j][col])) || i - j;
      }).forEach(function (item) { box.appendChild(item); });
    }

    function show(item) {
      var r = rows[+item.getAttribute("data-i")], panel = el("detail"), table = document.createElement("table");
      var close = document.createElement("button"), img = document.createElement("img");
      panel.textContent = "";
      close.type = "button";
      close.textContent = "close";
      close.onclick = function () { panel.hidden = true; item.classList.remove("selected"); };
      img.src = item.querySelector("img").src;
      img.alt = item.querySelector("img").alt;
      columns.forEach(function (c, k) {
        var tr = table.insertRow();
        tr.insertCell().textContent = c;
        tr.insertCell().textContent = r[k];
      });
      panel.appendChild(close);
      panel.appendChild(img);
      panel.appendChild(table);
      panel.hidden = false;
      items.forEach(function (x) { x.classList.toggle("selected", x === item); });
    }

    if (el("mode")) el("mode").addEventListener("change", apply[id]);
    el("filter").addEventListener("input", apply[id]);
    el("sort").addEventListener("change", sort);
    el("dir").addEventListener("click", function () {
      ascending = !ascending;
      el("dir").textContent = ascending ? "ascending" : "descending";
      sort();
    });
    box.addEventListener("click", function (e) {
      var item = e.target.closest("figure.item");
      if (item) show(item);
    });
    box.addEventListener("keydown", function (e) {
      if (e.key === "Enter" && e.target.matches("figure.item")) show(e.target);
    });
  }

  Array.prototype.forEach.call(document.querySelectorAll("[data-gallery]"), setup);

  // "examples" links of the failure-mode table: show that mode in the failures gallery.
  document.addEventListener("click", function (e) {
    var link = e.target.closest("a.show-mode"), select = document.getElementById("failures-mode");
    if (!link || !select) return;
    select.value = link.getAttribute("data-mode");
    apply.failures();
  });
})();
