// What bertviz's code expects from require.js: require.config(...) and requirejs([names], callback),
// served with jQuery and d3 by the app, so bertviz draws with no network.
window.require = {config: function () {}};
window.requirejs = function (names, callback) {
  var modules = {jquery: window.jQuery, d3: window.d3};
  callback.apply(null, names.map(function (name) { return modules[name]; }));
};
// xstatic ships d3 v3; bertviz was written for d3 v5. The one v5 name it uses is d3.schemeCategory10.
if (!d3.schemeCategory10) { d3.schemeCategory10 = d3.scale.category10().range(); }
