package pgstore

// For the tests of package pgstore_test, which take the store's locks.
const (
	MigrationLock   = migrationLock
	TenantLockQuery = tenantLockQuery
)

var TenantLockKey = tenantLockKey

// FirstMigration makes the schema of version 1, before search.
var FirstMigration = migrations[0]
