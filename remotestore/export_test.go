package remotestore

// SetAnswerLimits sets the most bytes read of an answer that is an entry
// (a Stat's, a write's) and of one that is a list (a directory's, the
// tenants'), for a test's time, so that a test need not send megabytes.
func SetAnswerLimits(entry, list int64) (restore func()) {
	oldEntry, oldList := maxAnswer, maxListAnswer
	maxAnswer, maxListAnswer = entry, list
	return func() { maxAnswer, maxListAnswer = oldEntry, oldList }
}
