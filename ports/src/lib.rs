//! End-of-link devices (TAP, host NIC model, generators); arrives with the simulator and TAP issues.
