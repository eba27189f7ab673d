module github.com/memtool/memtool

go 1.26.5

require (
	golang.org/x/sys v0.50.0
	golang.org/x/text v0.44.0
)
