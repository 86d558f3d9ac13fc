package mcpserver

// MaxLater is maxLater, for the tests.
const MaxLater = maxLater
