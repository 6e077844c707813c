// Precompile what the browser kernel imports at start (sitebuild/pycompile.py runs this with Node.js).
//
//   node pycompile.mjs <pyodide dir> <out dir> <packages as JSON> <inner .py>
//
// Boots the same Pyodide the site ships, in Node, with the kernel's boot packages from the site's lock,
// imports the kernel as the browser's worker does (piplite, pyodide_kernel) and runs two cells through
// it; then <inner .py> writes, into <out dir>, copies of the standard-library zip and of the wheels
// with bytecode for every module that was imported, and report.json. Only this Pyodide's own Python
// can write bytecode its interpreter accepts (same version, same magic number).
import { readFileSync } from "node:fs";

const [, , pyodideDir, outDir, packagesJson, innerPy] = process.argv;
const { loadPyodide } = await import(pyodideDir + "/pyodide.mjs");
const py = await loadPyodide({ indexURL: pyodideDir + "/", packages: JSON.parse(packagesJson) });
await py.runPythonAsync(`
import piplite.piplite
import pyodide_kernel
await pyodide_kernel.kernel_instance.run("print(1)\\n1 + 1")
await pyodide_kernel.kernel_instance.run("def f(x):\\n    return 1 / x\\nf(0)")
`);
py.FS.mkdirTree("/course-in");
py.FS.mkdirTree("/course-out");
py.FS.mount(py.FS.filesystems.NODEFS, { root: pyodideDir }, "/course-in");
py.FS.mount(py.FS.filesystems.NODEFS, { root: outDir }, "/course-out");
py.runPython(readFileSync(innerPy, "utf8"));
// the kernel replaced sys.stdout/stderr: report through return values, errors included
const report = py.runPython(`
import traceback
try:
    _result = precompile("/course-in", "/course-out")
except BaseException:
    _result = "ERROR " + traceback.format_exc()
_result`);
if (report.startsWith("ERROR ")) {
  console.error(report);
  process.exit(1);
}
console.log(report);
