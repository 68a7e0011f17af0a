/* Click a column header to sort the table by it (numeric where a data-v value is given). */
document.querySelectorAll("table.sortable thead th").forEach(function (th) {
  th.addEventListener("click", function () {
    var table = th.closest("table"), body = table.tBodies[0], col = th.cellIndex;
    var asc = th.getAttribute("aria-sort") !== "ascending";
    table.querySelectorAll("thead th").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
    function key(row) {
      var c = row.cells[col]; if (!c) return null;
      var v = c.getAttribute("data-v");
      if (v === null) return c.textContent.trim().toLowerCase();
      if (v === "") return null;
      var f = parseFloat(v); return isNaN(f) ? v.toLowerCase() : f;
    }
    Array.prototype.slice.call(body.rows)
      .map(function (r, i) { return [key(r), i, r]; })
      .sort(function (a, b) {
        if (a[0] === null || b[0] === null) return (a[0] === null) - (b[0] === null) || a[1] - b[1];
        var d = (typeof a[0] === typeof b[0]) ? (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)
                                              : (typeof a[0] === "number" ? -1 : 1);
        return (asc ? d : -d) || a[1] - b[1];
      })
      .forEach(function (t) { body.appendChild(t[2]); });
  });
});
/* A link to a row inside a closed block (the index's links to the evidence) opens the block. */
function openTarget() {
  var id = decodeURIComponent(location.hash.slice(1)), el = id && document.getElementById(id);
  for (var d = el; d; d = d.parentElement) { if (d.tagName === "DETAILS") d.open = true; }
  if (el) el.scrollIntoView();
}
window.addEventListener("hashchange", openTarget);
openTarget();
