"""A fixed catalog of the packages a real Android 14 phone carries (realistic device profiles).

About 300 packages, system and user, as a Pixel with a few popular apps installed lists them. The
labels are the APKs' own and often do not follow the package name (``com.facebook.katana`` is
"Facebook", ``com.ss.android.ugc.trill`` is "TikTok", ``com.tencent.mm`` is "WeChat"). Entries
with a launcher activity can be started (``monkey``, ``am start``); the emulated phone then shows a
placeholder screen titled with the label. Version numbers are derived from the package name, so
they are stable but not the stores' real ones.
"""

from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass

# Sections: "system" (not launchable), "system launcher", "user launcher", "user" (not launchable).
# A line is ``package | label`` plus ``| launcher activity`` (relative to the package when it starts with ".").
_CATALOG = """
[system]
android | Android System
com.android.adservices.api | Android AdServices
com.android.apps.tag | Tags
com.android.avatarpicker | Choose a picture
com.android.backupconfirm | Backup confirm
com.android.bips | Default Print Service
com.android.bluetoothmidiservice | Bluetooth MIDI Service
com.android.bookmarkprovider | Bookmark Provider
com.android.calllogbackup | Call Log Backup/Restore
com.android.carrierdefaultapp | Carrier Communications
com.android.certinstaller | Certificate Installer
com.android.companiondevicemanager | Companion Device Manager
com.android.credentialmanager | Credential Manager
com.android.cts.ctsshim | com.android.cts.ctsshim
com.android.cts.priv.ctsshim | com.android.cts.priv.ctsshim
com.android.devicediagnostics | Device Diagnostics
com.android.DeviceAsWebcam | Webcam Service
com.android.dreams.basic | Basic Daydreams
com.android.dreams.phototable | Photo Screensavers
com.android.dynsystem | Dynamic System Updates
com.android.egg | Android S Easter Egg
com.android.emergency | Emergency information
com.android.externalstorage | External Storage
com.android.htmlviewer | HTML Viewer
com.android.imsserviceentitlement | IMS Service Entitlement
com.android.inputdevices | Input Devices
com.android.internal.display.cutout.emulation.corner | Corner display cutout
com.android.internal.display.cutout.emulation.double | Double display cutout
com.android.internal.display.cutout.emulation.hole | Punch Hole cutout
com.android.internal.display.cutout.emulation.tall | Tall display cutout
com.android.internal.display.cutout.emulation.waterfall | Waterfall display cutout
com.android.internal.systemui.navbar.gestural | Gestural Navigation Bar
com.android.internal.systemui.navbar.gestural_extra_wide_back | Gestural Navigation Bar
com.android.internal.systemui.navbar.gestural_narrow_back | Gestural Navigation Bar
com.android.internal.systemui.navbar.gestural_wide_back | Gestural Navigation Bar
com.android.internal.systemui.navbar.threebutton | 3 Button Navigation Bar
com.android.intentresolver | Intent Resolver
com.android.keychain | Key Chain
com.android.localtransport | Local Transport
com.android.location.fused | Fused Location
com.android.managedprovisioning | Work Setup
com.android.microdroid.empty_payload | Microdroid Empty Payload
com.android.mms.service | MmsService
com.android.mtp | MTP Host
com.android.musicfx | MusicFX
com.android.nfc | NFC Service
com.android.ons | ONS
com.android.pacprocessor | PacProcessor
com.android.phone | Phone Services
com.android.printspooler | Print Spooler
com.android.providers.blockednumber | Blocked Numbers Storage
com.android.providers.calendar | Calendar Storage
com.android.providers.contacts | Contacts Storage
com.android.providers.downloads | Download Manager
com.android.providers.downloads.ui | Downloads
com.android.providers.partnerbookmarks | Partner Bookmarks Provider
com.android.providers.settings | Settings Storage
com.android.providers.telephony | Phone and Messaging Storage
com.android.providers.userdictionary | User Dictionary
com.android.proxyhandler | ProxyHandler
com.android.se | SecureElementApplication
com.android.server.telecom | Call Management
com.android.sharedstoragebackup | Shared storage backup
com.android.shell | Shell
com.android.simappdialog | Sim App Dialog
com.android.smspush | com.android.smspush
com.android.statementservice | Intent Filter Verification Service
com.android.stk | SIM Toolkit
com.android.storagemanager | Storage Manager
com.android.systemui | System UI
com.android.systemui.accessibility.accessibilitymenu | Accessibility Menu
com.android.theme.font.notoserifsource | Noto Serif / Source Sans Pro
com.android.theme.icon.circle | Circle
com.android.theme.icon.pebble | Pebble
com.android.theme.icon.roundedrect | Rounded Rectangle
com.android.theme.icon.squircle | Squircle
com.android.theme.icon.taperedrect | Tapered Rectangle
com.android.theme.icon.teardrop | Teardrop
com.android.theme.icon.vessel | Vessel
com.android.theme.icon_pack.circular.android | Circular
com.android.theme.icon_pack.circular.launcher | Circular
com.android.theme.icon_pack.circular.settings | Circular
com.android.theme.icon_pack.circular.systemui | Circular
com.android.theme.icon_pack.circular.themepicker | Circular
com.android.theme.icon_pack.filled.android | Filled
com.android.theme.icon_pack.filled.launcher | Filled
com.android.theme.icon_pack.filled.settings | Filled
com.android.theme.icon_pack.filled.systemui | Filled
com.android.theme.icon_pack.filled.themepicker | Filled
com.android.theme.icon_pack.rounded.android | Rounded
com.android.theme.icon_pack.rounded.launcher | Rounded
com.android.theme.icon_pack.rounded.settings | Rounded
com.android.theme.icon_pack.rounded.systemui | Rounded
com.android.theme.icon_pack.rounded.themepicker | Rounded
com.android.traceur | System Tracing
com.android.virtualmachine.res | Virtual Machine Framework
com.android.vpndialogs | VpnDialogs
com.android.wallpaper.livepicker | Live Wallpaper Picker
com.android.wallpaperbackup | com.android.wallpaperbackup
com.android.wallpapercropper | com.android.wallpapercropper
com.android.hotwordenrollment.okgoogle | OK Google Enrollment
com.android.hotwordenrollment.xgoogle | X Google Enrollment
com.google.android.accessibility.soundamplifier | Sound Amplifier
com.google.android.accessibility.switchaccess | Switch Access
com.google.android.adservices.api | Android System
com.google.android.apps.accessibility.voiceaccess | Voice Access
com.google.android.apps.camera.services | Camera Services
com.google.android.apps.carrier.carrierwifi | CarrierWifi
com.google.android.apps.carrier.log | Carrier Logging
com.google.android.apps.customization.pixel | Pixel Themes
com.google.android.apps.diagnosticstool | Pixel Troubleshooting
com.google.android.apps.dreamliner | Pixel Stand
com.google.android.apps.dreamlinerupdater | Pixel Stand Updater
com.google.android.apps.gcs | Google Connectivity Services
com.google.android.apps.helprtc | Google Support Services
com.google.android.apps.pixel.agent | Pixel Feedback
com.google.android.apps.pixel.dcservice | Pixel Dock Service
com.google.android.apps.pixel.relationships | Pixel Relationships
com.google.android.apps.pixel.support | Pixel Support
com.google.android.apps.pixelmigrate | Data Restore Tool
com.google.android.apps.restore | Restore apps
com.google.android.apps.safetyhub | Personal Safety
com.google.android.apps.scone | Adaptive Connectivity Services
com.google.android.apps.setupwizard.searchselector | Search Selector
com.google.android.apps.turbo | Device Health Services
com.google.android.apps.wallpaper | Wallpaper & style
com.google.android.apps.wallpaper.pixel | Pixel Wallpapers 2023
com.google.android.apps.wellbeing | Digital Wellbeing
com.google.android.apps.work.clouddpc | Android Device Policy
com.google.android.apps.work.oobconfig | Work Profile Setup
com.google.android.as | Android System Intelligence
com.google.android.as.oss | Private Compute Services
com.google.android.bluetooth | Bluetooth
com.google.android.captiveportallogin | CaptivePortalLogin
com.google.android.cellbroadcastreceiver | Wireless emergency alerts
com.google.android.cellbroadcastservice | Cell Broadcast Service
com.google.android.configupdater | ConfigUpdater
com.google.android.connectivity.resources | System Connectivity Resources
com.google.android.connectivitymonitor | Connectivity Monitor
com.google.android.devicelockcontroller | DeviceLockController
com.google.android.documentsui | Files
com.google.android.euicc | eSIM Manager
com.google.android.ext.services | Android Services Library
com.google.android.ext.shared | Android Shared Library
com.google.android.federatedcompute | Federated Compute
com.google.android.feedback | Market Feedback Agent
com.google.android.flipendo | Extreme Battery Saver
com.google.android.gms | Google Play services
com.google.android.gms.supervision | Google Play services for families
com.google.android.gsf | Google Services Framework
com.google.android.hardwareinfo | Device Info
com.google.android.health.connect.backuprestore | Health Connect Backup and Restore
com.google.android.healthconnect.controller | Health Connect
com.google.android.hotspot2.osulogin | OsuLogin
com.google.android.inputmethod.latin | Gboard
com.google.android.iwlan | Iwlan
com.google.android.marvin.talkback | Android Accessibility Suite
com.google.android.markup | Markup
com.google.android.modulemetadata | Module Metadata
com.google.android.networkstack | Network manager
com.google.android.networkstack.tethering | Tethering
com.google.android.ondevicepersonalization.services | OnDevicePersonalization
com.google.android.onetimeinitializer | Google One Time Init
com.google.android.overlay.gmsconfig.asi | com.google.android.overlay.gmsconfig.asi
com.google.android.overlay.gmsconfig.common | com.google.android.overlay.gmsconfig.common
com.google.android.overlay.gmsconfig.comms | com.google.android.overlay.gmsconfig.comms
com.google.android.overlay.gmsconfig.geotz | com.google.android.overlay.gmsconfig.geotz
com.google.android.overlay.gmsconfig.gsa | com.google.android.overlay.gmsconfig.gsa
com.google.android.overlay.gmsconfig.photos | com.google.android.overlay.gmsconfig.photos
com.google.android.overlay.gmsconfig.personalsafety | com.google.android.overlay.gmsconfig.personalsafety
com.google.android.overlay.googleconfig | com.google.android.overlay.googleconfig
com.google.android.overlay.googlewebview | com.google.android.overlay.googlewebview
com.google.android.overlay.modules.captiveportallogin.forframework | CaptivePortalLogin resources
com.google.android.overlay.modules.ext.services | Android Services Library resources
com.google.android.overlay.modules.permissioncontroller | Permission controller resources
com.google.android.overlay.pixelconfigcommon | com.google.android.overlay.pixelconfigcommon
com.google.android.packageinstaller | Package installer
com.google.android.partnersetup | Google Partner Setup
com.google.android.permissioncontroller | Permission controller
com.google.android.pixel.setupwizard | Pixel Setup
com.google.android.printservice.recommendation | Print Service Recommendation Service
com.google.android.projection.gearhead | Android Auto
com.google.android.providers.media.module | Media Storage
com.google.android.rkpdapp | RemoteProvisioner
com.google.android.safetycenter.resources | Safety Center Resources
com.google.android.sdksandbox | SDK Sandbox
com.google.android.settings.intelligence | Settings Services
com.google.android.setupwizard | Android Setup
com.google.android.soundpicker | Sounds
com.google.android.syncadapters.calendar | Google Calendar Sync
com.google.android.syncadapters.contacts | Google Contacts Sync
com.google.android.tag | Tags
com.google.android.tetheringentitlement | Tethering entitlement
com.google.android.trichromelibrary | Trichrome Library
com.google.android.tts | Speech Recognition & Synthesis from Google
com.google.android.uwb.resources | System UWB Resources
com.google.android.webview | Android System WebView
com.google.android.wifi.resources | System Wi-Fi Resources
com.google.euiccpixel | eSIM Manager
com.google.mainline.adservices | Google AdServices Mainline
com.google.mainline.telemetry | Main components telemetry
com.google.SSRestartDetector | SSRestartDetector
com.shannon.imsservice | ShannonIms
com.shannon.rcsservice | ShannonRcs
com.google.android.apps.adm | Find My Device
com.google.android.apps.googleassistant | Assistant
com.google.android.apps.safetyhub.emergency | Safety
com.android.wifi.dialog | Wi-Fi dialog
com.android.providers.media | Media Storage
com.google.android.overlay.modules.documentsui | Files resources
com.google.android.overlay.modules.cellbroadcastreceiver | Wireless emergency alerts resources
com.google.android.apps.work.clouddpc.overlay | Android Device Policy overlay
[system launcher]
com.android.chrome | Chrome | com.google.android.apps.chrome.Main
com.android.vending | Play Store | .AssetBrowserActivity
com.google.android.GoogleCamera | Camera | com.android.camera.CameraLauncher
com.google.android.apps.docs | Drive | .app.NewMainProxyActivity
com.google.android.apps.maps | Maps | com.google.android.maps.MapsActivity
com.google.android.apps.nbu.files | Files by Google | .home.HomeActivity
com.google.android.apps.photos | Photos | .home.HomeActivity
com.google.android.apps.recorder | Recorder | .ui.RecorderActivity
com.google.android.apps.tachyon | Meet | .MainActivity
com.google.android.apps.walletnfcrel | Wallet | com.google.commerce.tapandpay.android.wallet.WalletActivity
com.google.android.apps.youtube.music | YouTube Music | .activities.MusicActivity
com.google.android.calculator | Calculator | com.android.calculator2.Calculator
com.google.android.calendar | Calendar | com.android.calendar.AllInOneActivity
com.google.android.deskclock | Clock | com.android.deskclock.DeskClock
com.google.android.dialer | Phone | .extensions.GoogleDialtactsActivity
com.google.android.gm | Gmail | .ConversationListActivityGmail
com.google.android.googlequicksearchbox | Google | .SearchActivity
com.google.android.keep | Keep Notes | .activities.BrowseActivity
com.google.android.videos | Google TV | com.google.android.apps.play.movies.mobile.usecase.home.GuideActivity
com.google.android.youtube | YouTube | .HomeActivity
[user launcher]
com.airbnb.android | Airbnb | .feat.homescreen.HomeActivity
com.amazon.mShop.android.shopping | Amazon Shopping | com.amazon.mShop.home.HomeActivity
com.discord | Discord | .main.MainActivity
com.duolingo | Duolingo | .app.LoginActivity
com.facebook.katana | Facebook | .LoginActivity
com.facebook.orca | Messenger | .auth.StartScreenActivity
com.google.android.apps.bard | Gemini | .shellapp.BardEntryPointActivity
com.google.android.apps.chromecast.app | Google Home | .DiscoveryActivity
com.google.android.apps.fitness | Fit | .welcome.WelcomeActivity
com.google.android.apps.translate | Translate | .TranslateActivity
com.google.android.apps.authenticator2 | Authenticator | com.google.android.apps.authenticator.AuthenticatorActivity
com.instagram.android | Instagram | com.instagram.mainactivity.LauncherActivity
com.linkedin.android | LinkedIn | .authenticator.LaunchActivity
com.microsoft.office.outlook | Outlook | .MainActivity
com.microsoft.teams | Microsoft Teams | .views.activities.SplashActivity
com.netflix.mediaclient | Netflix | .ui.launch.UIWebViewActivity
com.paypal.android.p2pmobile | PayPal | .startup.activities.StartupActivity
com.pinterest | Pinterest | .activity.PinterestActivity
com.reddit.frontpage | Reddit | launcher.default
com.snapchat.android | Snapchat | .LandingPageActivity
com.spotify.music | Spotify | .MainActivity
com.ss.android.ugc.trill | TikTok | com.ss.android.ugc.aweme.splash.SplashActivity
com.tencent.mm | WeChat | .ui.LauncherUI
com.twitter.android | X | .StartActivity
com.ubercab | Uber | .presidio.app.core.root.RootActivity
com.whatsapp | WhatsApp | .Main
org.mozilla.firefox | Firefox | .App
org.telegram.messenger | Telegram | org.telegram.ui.LaunchActivity
org.thoughtcrime.securesms | Signal | .RoutingActivity
org.videolan.vlc | VLC | .StartActivity
us.zoom.videomeetings | Zoom | com.zipow.videobox.LauncherActivity
[user]
com.google.ar.core | Google Play Services for AR
com.google.android.apps.subscriptions.red | Google One
com.google.android.apps.messaging.overlay | Messages overlay
com.facebook.appmanager | Facebook App Manager
com.facebook.services | Facebook Services
com.facebook.system | Facebook App Installer
com.microsoft.appmanager | Link to Windows
com.google.android.apps.youtube.creator | YouTube Studio
com.google.android.apps.restore.overlay | com.google.android.apps.restore.overlay
com.google.android.inputmethod.latin.overlay | Gboard overlay
com.google.android.gms.policy_sidecar_aps | Policy Sidecar
com.google.android.apps.docs.editors.docs | Docs
com.google.android.apps.docs.editors.sheets | Sheets
com.google.android.apps.docs.editors.slides | Slides
com.google.android.apps.photos.scanner | PhotoScan
com.google.android.apps.kids.familylink | Family Link
com.google.android.apps.podcasts | Google Podcasts
com.google.android.apps.magazines | Google News
com.google.android.apps.walletnfcrel.overlay | Wallet overlay
com.google.android.apps.wearables.maestro.companion | Pixel Buds
com.google.android.apps.wear.companion | Pixel Watch
com.google.android.apps.nexuslauncher.overlay | Pixel Launcher overlay
com.google.android.gms.location.history | Google Location History
com.google.android.play.games | Google Play Games
com.google.android.apps.classroom | Classroom
com.google.android.apps.meetings | Google Meet (original)
"""

SECTIONS = {"system": (True, False), "system launcher": (True, True), "user launcher": (False, True),
            "user": (False, False)}


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    package: str
    label: str
    system: bool
    activity: str | None  # the launcher activity (full class name), None when not launchable

    @property
    def launchable(self) -> bool:
        return self.activity is not None

    @property
    def version(self) -> tuple[int, str]:
        """(versionCode, versionName), stable per package."""
        crc = zlib.crc32(self.package.encode())
        name = f"{1 + crc % 40}.{(crc >> 8) % 100}.{(crc >> 16) % 1000}"
        return 10_000_000 + crc % 900_000_000, name


@functools.cache
def catalog() -> tuple[CatalogEntry, ...]:
    """The catalog, parsed once."""
    entries: list[CatalogEntry] = []
    system, launcher = False, False
    for line in _CATALOG.strip().splitlines():
        if line.startswith("["):
            system, launcher = SECTIONS[line.strip("[]")]
            continue
        parts = [part.strip() for part in line.split("|")]
        package, label = parts[0], parts[1]
        activity = None
        if launcher:
            relative = parts[2]
            activity = package + relative if relative.startswith(".") else relative
        entries.append(CatalogEntry(package, label, system, activity))
    return tuple(entries)
