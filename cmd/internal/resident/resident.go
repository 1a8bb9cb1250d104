// Package resident lets go of the pages of pk's own executable that the
// start of the process touched and the command does not need.
//
// pk's executable is 15 MB. The package initialisations and the command
// line's setup touch code and tables all over it, and the kernel maps the
// 64 KB around each page first touched in a file mapping (fault-around):
// before a command reads a byte of its input, 7-8 MB of the executable are
// resident, most of it code that never runs again (a Go hello-world starts
// at 1.8 MB). Those pages count in the command's peak RSS. Handed back
// once the command line is set up, only what the command runs comes back:
// pk hash of a 5 MB cloudpickle state peaked 1.6-2.0 MB lower (code 3.9 ->
// 2.2 MB resident; the read-only data and function tables come back almost
// whole).
//
// What is handed back is clean: pages of a private mapping of the file
// that nothing wrote, which the kernel maps again from its page cache,
// unchanged, when they are touched (a minor fault, as when the process
// started). A mapping the process can write, or one with a page it wrote
// (a dynamic loader's relocations, before the mapping was made read-only),
// is never touched.
package resident
