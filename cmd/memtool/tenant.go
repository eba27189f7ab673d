package main

import "github.com/memtool/memtool/filestore"

// A multi-tenant file store keeps tenant ID's memory in the directory
// filestore.TenantsDir/ID of the store directory; migrate reads it to
// carry policy data along.
const tenantsDir = filestore.TenantsDir

// storeOwnName reports whether a name in a store directory belongs to the
// file store's machinery rather than to a memory.
func storeOwnName(name string) bool { return filestore.OwnName(name) }
