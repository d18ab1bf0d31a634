package faults

import "context"

// def is the injector the package's tests arm when they need no other;
// ctx0 carries it, as a run's contexts carry the run's injector.
var def = NewInjector()

var ctx0 = def.Bind(context.Background())
