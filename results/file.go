package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"
)

// MaxFileBytes bounds what Read accepts, so that a wrong path cannot exhaust memory.
const MaxFileBytes = 1 << 30

// FileError is a results file that could not be written or read: what was attempted, the
// path (empty for a stream) and why.
type FileError struct {
	Op   string // "write", "read", "decode", "validate"
	Path string
	Err  error
}

func (e *FileError) Error() string {
	if e.Path == "" {
		return "results: " + e.Op + ": " + e.Err.Error()
	}
	return "results: " + e.Op + " " + e.Path + ": " + e.Err.Error()
}

func (e *FileError) Unwrap() error { return e.Err }

// ErrUnknownField is wrapped by the error for a file with a field the schema does not have.
var ErrUnknownField = errors.New("unknown field")

// ErrVersion is wrapped by the error for a file whose schema_version this package cannot read.
var ErrVersion = errors.New("unsupported schema_version")

// Marshal validates r and returns it as indented JSON with a final newline. It sets
// r.SchemaVersion to SchemaVersion if it is 0.
func Marshal(r *Run) ([]byte, error) {
	if r.SchemaVersion == 0 {
		r.SchemaVersion = SchemaVersion
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Test hooks for simulating failures between creating the temporary file and renaming it.
var (
	syncFile = (*os.File).Sync
	rename   = os.Rename
)

// WriteFile writes r to path atomically: to a temporary file in the same directory, synced,
// then renamed over path, then the directory synced. Readers see the old file or the complete
// new one, never a partial write; on any error the temporary file is removed and path is left
// as it was.
func WriteFile(path string, r *Run) error {
	b, err := Marshal(r)
	if err != nil {
		return &FileError{Op: "write", Path: path, Err: err}
	}
	if err := writeAtomic(path, b); err != nil {
		return &FileError{Op: "write", Path: path, Err: err}
	}
	return nil
}

func writeAtomic(path string, b []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(b); err != nil {
		return err
	}
	if err = syncFile(f); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Chmod(tmp, 0o644); err != nil {
		return err
	}
	if err = rename(tmp, path); err != nil {
		return err
	}
	// The rename is durable only once the directory is; a failure here leaves a complete
	// file in place, so it is not reported as a failed write.
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// ReadFile reads and validates the results file at path (see Read).
func ReadFile(path string) (*Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &FileError{Op: "read", Path: path, Err: err}
	}
	defer f.Close()
	r, err := Read(f)
	if err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			fe.Path = path
		}
		return nil, err
	}
	r.Source = path
	return r, nil
}

// Read reads one results file strictly: the schema_version must be one this package reads,
// unknown fields, trailing data and a truncated file are errors, and the values must pass
// Run.Validate. Errors are *FileError and name the offending field.
func Read(rd io.Reader) (*Run, error) {
	b, err := io.ReadAll(io.LimitReader(rd, MaxFileBytes+1))
	if err != nil {
		return nil, &FileError{Op: "read", Err: err}
	}
	if len(b) > MaxFileBytes {
		return nil, &FileError{Op: "read", Err: fmt.Errorf("larger than %d bytes", MaxFileBytes)}
	}
	r, err := decode(b)
	if err != nil {
		return nil, &FileError{Op: "decode", Err: err}
	}
	if err := r.Validate(); err != nil {
		return nil, &FileError{Op: "validate", Err: err}
	}
	return r, nil
}

func decode(b []byte) (*Run, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errors.New("empty file")
	}
	// The version decides how to read the rest, so look at it alone first: a newer file
	// would otherwise fail on its first new field with a less useful error.
	var probe struct {
		V json.RawMessage `json:"schema_version"`
	}
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&probe); err != nil {
		return nil, jsonError(b, err)
	}
	if probe.V == nil {
		return nil, errors.New("schema_version: missing (not an rpcrdma-bench results file?)")
	}
	var v int
	if err := json.Unmarshal(probe.V, &v); err != nil {
		return nil, fmt.Errorf("schema_version: %s is not an integer", probe.V)
	}
	switch {
	case v > SchemaVersion:
		return nil, fmt.Errorf("%w: file has schema_version %d, this build reads up to %d: upgrade rpcrdma-bench", ErrVersion, v, SchemaVersion)
	case v < 1:
		return nil, fmt.Errorf("%w: schema_version %d (versions start at 1)", ErrVersion, v)
	}

	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	r := new(Run)
	if err := dec.Decode(r); err != nil {
		if strings.HasPrefix(err.Error(), "json: unknown field") {
			if path := unknownField(b, reflect.TypeFor[Run]()); path != "" {
				return nil, fmt.Errorf("%s: %w (schema_version %d has no such field)", path, ErrUnknownField, SchemaVersion)
			}
		}
		return nil, jsonError(b, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the end of the results object at offset %d", dec.InputOffset())
	}
	return r, nil
}

// jsonError makes encoding/json's errors say where and what in results terms.
func jsonError(b []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("truncated: the file ends inside the JSON value (%d bytes)", len(b))
	case errors.As(err, &syn):
		if syn.Offset >= int64(len(bytes.TrimRight(b, " \t\r\n"))) {
			return fmt.Errorf("truncated: the file ends inside the JSON value (%d bytes)", len(b))
		}
		return fmt.Errorf("invalid JSON at offset %d: %w", syn.Offset, err)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return fmt.Errorf("the file holds a JSON %s, not a results object (one JSON object with schema_version, points, ...)", typ.Value)
		}
		return fmt.Errorf("%s (offset %d): %s is not a valid %s", typ.Field, typ.Offset, typ.Value, jsonTypeName(typ.Type))
	}
	return err
}

// jsonTypeName names the JSON value a Go type decodes from, so that errors speak JSON, not Go.
func jsonTypeName(t reflect.Type) string {
	if t == reflect.TypeFor[time.Time]() {
		return "RFC 3339 time string"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "base64 string"
		}
		return "array"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Pointer:
		return jsonTypeName(t.Elem())
	}
	return t.Kind().String()
}

// ReadFiles reads several results files (ReadInputs, "-" being standard input), for Compare
// and reports; the first error stops it.
func ReadFiles(paths ...string) ([]*Run, error) { return ReadInputs(os.Stdin, paths) }
