// The SyncClient module.
