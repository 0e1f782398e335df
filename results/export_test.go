package results

import "os"

// Internals the external tests (package results_test) reach.
var (
	CPUModel = cpuModel
	CSVInt   = csvInt
)

// SetFileHooks replaces the fsync and rename WriteFile uses, for fault injection; restore
// puts the real ones back.
func SetFileHooks(sync func(*os.File) error, ren func(from, to string) error) (restore func()) {
	saveSync, saveRename := syncFile, rename
	syncFile, rename = sync, ren
	return func() { syncFile, rename = saveSync, saveRename }
}
