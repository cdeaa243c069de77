// Command pulumi-sdkgen generates the Python and Go SDKs of a Pulumi package from its schema with
// Pulumi's own code generators (github.com/pulumi/pulumi/pkg/v3/codegen/{python,go}), the same
// functions the pulumi-language-python and pulumi-language-go plugins call when `pulumi package add`
// or `pulumi package gen-sdk` asks them to generate a package. It stands in for the Pulumi CLI in
// tests: those plugins' modules are not served by the Go module proxy here.
//
//	pulumi-sdkgen <schema.json> <out-dir>    writes <out-dir>/python and <out-dir>/go
//
// As `pulumi package add` does, the package is bound with dangling references allowed and
// generated in "support pack" mode (a versioned SDK with its own go.mod / pyproject).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/blang/semver"
	gogen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	pygen "github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
)

// noDependencies is the loader for a schema that references no other package: any lookup is an
// error that names the package, rather than a silent download.
type noDependencies struct{}

func (noDependencies) LoadPackage(pkg string, _ *semver.Version) (*schema.Package, error) {
	return nil, fmt.Errorf("the schema references package %q: pulumi-sdkgen loads no dependencies", pkg)
}

func (l noDependencies) LoadPackageV2(_ context.Context, d *schema.PackageDescriptor) (*schema.Package, error) {
	return l.LoadPackage(d.Name, d.Version)
}

func (noDependencies) LoadPackageReference(pkg string, _ *semver.Version) (schema.PackageReference, error) {
	return nil, fmt.Errorf("the schema references package %q: pulumi-sdkgen loads no dependencies", pkg)
}

func (l noDependencies) LoadPackageReferenceV2(_ context.Context, d *schema.PackageDescriptor) (schema.PackageReference, error) {
	return l.LoadPackageReference(d.Name, d.Version)
}

func bind(path string) (*schema.Package, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var spec schema.PackageSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	pkg, diags, err := schema.BindSpec(spec, noDependencies{}, schema.ValidationOptions{AllowDanglingReferences: true})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if diags.HasErrors() {
		return nil, fmt.Errorf("%s: %w", path, errors.Join(diags.Errs()...))
	}
	// `pulumi package add` always generates a local package in this mode (pkg/cmd/pulumi/packages).
	pkg.SupportPack = true
	return pkg, nil
}

func write(dir string, files map[string][]byte) error {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		out := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(out, files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

func run(schemaPath, outDir string) error {
	// Each generator imports its own language section into the package, so each gets a fresh bind.
	pyPkg, err := bind(schemaPath)
	if err != nil {
		return err
	}
	py, err := pygen.GeneratePackage("pulumi-language-python", pyPkg, nil, noDependencies{})
	if err != nil {
		return fmt.Errorf("python: %w", err)
	}
	if err := write(filepath.Join(outDir, "python"), py); err != nil {
		return err
	}
	goPkg, err := bind(schemaPath)
	if err != nil {
		return err
	}
	g, err := gogen.GeneratePackage("pulumi-language-go", goPkg, nil)
	if err != nil {
		return fmt.Errorf("go: %w", err)
	}
	return write(filepath.Join(outDir, "go"), g)
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: pulumi-sdkgen <schema.json> <out-dir>")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-sdkgen: %v\n", err)
		os.Exit(1)
	}
}
