// Package hostbus opens the host's I2C buses, SPI ports and GPIO pins through periph, on first
// use: a laptop, or a board with only ALSA, never touches /dev/i2c-* or /dev/spidev*. It is the
// driverreg.Buses the daemon hands the hardware drivers.
package hostbus
