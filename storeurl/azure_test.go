//go:build azure

package storeurl_test

const azureBuilt = true
