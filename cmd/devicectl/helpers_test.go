package main

import ()

// The stand-in server and the config the run tests share.
